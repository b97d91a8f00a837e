// The tokenizer of the small string grammar for `fields`, `order_by` and `group_by`: identifiers, backticked
// names, dots, parentheses, `*` and commas. Any other character is refused before anything is built.
import { DataError } from '../errors/errors';

/** One token of a query string. */
export interface Token {
  kind: 'word' | 'quoted' | 'dot' | 'lparen' | 'rparen' | 'star' | 'comma';
  text: string;
}

/** User text shortened for an error message. */
export function clip(text: unknown): string {
  const s = typeof text === 'string' ? text : (JSON.stringify(text) ?? String(text));
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

const PUNCTUATION: Record<string, Token['kind']> = {
  '.': 'dot',
  '(': 'lparen',
  ')': 'rparen',
  '*': 'star',
  ',': 'comma',
};

/** Splits `input` into tokens; `where` names the parameter in errors. */
export function tokenize(input: string, where: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const bad = () => new DataError(`${where}: invalid syntax in "${clip(input)}"`);
  while (i < input.length) {
    const ch = input[i] as string;
    if (ch === ' ' || ch === '\t') {
      i++;
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(input.slice(i)) as RegExpExecArray;
      tokens.push({ kind: 'word', text: m[0] });
      i += m[0].length;
    } else if (ch === '`') {
      const end = input.indexOf('`', i + 1);
      const text = end < 0 ? '' : input.slice(i + 1, end);
      // DocType names may hold spaces and hyphens (`tabWidget Part`); nothing else is a name.
      if (!/^[A-Za-z0-9_][A-Za-z0-9_ -]*$/.test(text)) throw bad();
      tokens.push({ kind: 'quoted', text });
      i = end + 1;
    } else if (PUNCTUATION[ch]) {
      tokens.push({ kind: PUNCTUATION[ch] as Token['kind'], text: ch });
      i++;
    } else {
      throw bad();
    }
  }
  return tokens;
}

/** A cursor over tokens for the recursive-descent parsers. */
export class TokenStream {
  private at = 0;
  constructor(
    private readonly tokens: Token[],
    /** The whole input, for error messages. */
    readonly input: string,
    /** The parameter name, for error messages. */
    readonly where: string,
  ) {}

  /** The next token without consuming it. */
  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }

  /** Consumes the next token. */
  next(): Token | undefined {
    return this.tokens[this.at++];
  }

  /** True when every token was consumed. */
  done(): boolean {
    return this.at >= this.tokens.length;
  }

  /** Consumes the next token if it is the keyword `word` (case-insensitive). */
  keyword(word: string): boolean {
    const t = this.peek();
    if (t?.kind === 'word' && t.text.toLowerCase() === word) {
      this.at++;
      return true;
    }
    return false;
  }

  /** Consumes a token of `kind` or throws. */
  expect(kind: Token['kind']): Token {
    const t = this.next();
    if (t?.kind !== kind) throw this.error();
    return t;
  }

  /** The error for input that does not fit the grammar. */
  error(): DataError {
    return new DataError(`${this.where}: invalid syntax in "${clip(this.input)}"`);
  }
}

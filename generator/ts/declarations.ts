// Prints the simple declarations of the generated models, routes and registry (imports, JSDoc, interfaces) as text,
// byte for byte in the layout ts-morph's structure printer (`printStructure`) gave them: building structures and
// walking them through ts-morph's writer took 13-15 s of the main thread's 58 s (a profile under load) for the 766
// fixture DocTypes' models and routes, and loading ts-morph about 0.8 s more. ts-morph still reads the controllers'
// methods (generator/methods/extract-methods.ts), loaded only when there are some.

/** `import { a, b } from 'module';` (`import type` when `typeOnly`). */
export function importLine(names: readonly string[], from: string, typeOnly = false): string {
  return `import ${typeOnly ? 'type ' : ''}{ ${names.join(', ')} } from '${from}';\n`;
}

/**
 * A JSDoc block at `indent` as ts-morph prints a doc string: one line `/** text *\/` (no second space before `*\/`
 * when the text is empty or ends with one), or one ` * ` line per line of a multi-line text (a first empty line dropped).
 */
export function jsDoc(text: string, indent = ''): string {
  const lines = text.split(/\r?\n/);
  if (lines.length <= 1) return `${indent}/** ${text}${text === '' || text.endsWith(' ') ? '' : ' '}*/\n`;
  const body = lines.slice(lines[0] === '' ? 1 : 0).map((line) => `${indent} *${line ? ` ${line}` : ''}\n`);
  return `${indent}/**\n${body.join('')}${indent} */\n`;
}

/** One property of an interface: `name?: type;` after its JSDoc. */
export interface PropertyText {
  name: string;
  type: string;
  optional?: boolean;
  docs?: string;
}

/** An exported interface with its JSDoc; `extendsText` as written after `extends`. */
export function interfaceText(
  name: string,
  properties: readonly PropertyText[],
  options: { docs?: string; extendsText?: string } = {},
): string {
  const members = properties.map(
    (p) =>
      `${p.docs === undefined ? '' : jsDoc(p.docs, '  ')}  ${p.name}${p.optional ? '?' : ''}: ${p.type};\n`,
  );
  return (
    (options.docs === undefined ? '' : jsDoc(options.docs)) +
    `export interface ${name} ${options.extendsText ? `extends ${options.extendsText} ` : ''}{\n${members.join('')}}\n`
  );
}

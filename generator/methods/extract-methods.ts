// Reads each controller `.ts` beside a DocType JSON with ts-morph: `@whitelist(...)` methods of the default-exported
// class and `export const x = whitelist(options, fn)` functions, with the JSON Schema of their argument.
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  Node,
  Project,
  ts,
  type CallExpression,
  type JSDocableNode,
  type ObjectLiteralExpression,
  type ParameterDeclaration,
  type SourceFile,
} from 'ts-morph';
import type { JsonSchema } from '../json-schema';
import type { DocTypeIR } from '../normalize';
import type { Problem } from '../problems';
import { misspelledHook } from './hook-names';
import { FORBIDDEN_ARGUMENTS, UnsupportedArgumentType, jsonArguments, typeSchema } from './argument-schema';
import { resultSchema, type ResultSchema } from './return-schema';

/** A node that may carry JSDoc (a method, a variable statement). */
type JSDocable = Pick<JSDocableNode, 'getJsDocs'>;

/** A whitelisted method or function found in a controller. */
export interface MethodIR {
  /** `function`: a module export, called by dotted path; `document`: a controller method, called on a document. */
  kind: 'function' | 'document';
  /** The export or method name. */
  name: string;
  /** Dotted path of a function (`widgets.widget.widget.stock`); for a document method, the module path plus the name. */
  path: string;
  /** Verbs read from the literal options (the runtime options decide; these document the API). */
  verbs: string[];
  allowGuest: boolean;
  rateLimited: boolean;
  /** JSON Schema of the one object argument. */
  schema: JsonSchema;
  /** Arguments that may arrive as JSON text in a query string. */
  jsonArgs: string[];
  /** The result, read from the return type (the OpenAPI documents and the typed client describe it). */
  result: ResultSchema;
}

/** DocType name → its whitelisted methods, sorted by kind and name. */
export type MethodMap = ReadonlyMap<string, MethodIR[]>;

const DEFAULT_VERBS = ['GET', 'POST', 'PUT', 'DELETE'];
const EMPTY_ARGS: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

/** Dotted module path of a controller: its DocType file's path under the doctypes root, without extension. */
export function modulePath(ir: DocTypeIR): string {
  return ir.loaded.relative
    .replace(/\.json$/, '')
    .split('/')
    .join('.');
}

interface Options {
  verbs: string[];
  allowGuest: boolean;
  rateLimited: boolean;
}

function literalOptions(arg: Node | undefined): Options {
  const options: Options = { verbs: DEFAULT_VERBS, allowGuest: false, rateLimited: false };
  if (!arg || !Node.isObjectLiteralExpression(arg)) return options;
  const prop = (obj: ObjectLiteralExpression, name: string) => {
    const p = obj.getProperty(name);
    return p && Node.isPropertyAssignment(p) ? p.getInitializer() : undefined;
  };
  const methods = prop(arg, 'methods');
  if (methods && Node.isArrayLiteralExpression(methods)) {
    options.verbs = methods
      .getElements()
      .filter(Node.isStringLiteral)
      .map((e) => e.getLiteralValue().toUpperCase());
  }
  options.allowGuest = prop(arg, 'allowGuest')?.getKind() === ts.SyntaxKind.TrueKeyword;
  options.rateLimited = prop(arg, 'rateLimit') !== undefined;
  return options;
}

function argumentSchema(param: ParameterDeclaration | undefined, where: string): JsonSchema {
  if (!param) return EMPTY_ARGS;
  const type = param.getType();
  const schema = typeSchema(type, param);
  if (schema.type !== 'object')
    throw new UnsupportedArgumentType(`${where} must take one object argument, not ${type.getText(param)}`);
  for (const name of FORBIDDEN_ARGUMENTS) {
    if (name in ((schema.properties as object | undefined) ?? {}))
      throw new UnsupportedArgumentType(`${where} may not take an argument named ${name}`);
  }
  return schema;
}

function whitelistCall(node: Node | undefined): CallExpression | undefined {
  if (!node || !Node.isCallExpression(node)) return undefined;
  return node.getExpression().getText() === 'whitelist' ? node : undefined;
}

/**
 * A result schema declared in JSDoc: `@returnsSchema {...}` (JSON Schema as JSON) on the method or the exported
 * `const`, which replaces the one read from the return type (for results the type cannot say, or says loosely).
 */
function declaredResult(docs: JSDocable | undefined, where: string): ResultSchema | undefined {
  for (const doc of docs?.getJsDocs() ?? []) {
    for (const tag of doc.getTags()) {
      if (tag.getTagName() !== 'returnsSchema') continue;
      const text = tag.getCommentText()?.trim() ?? '';
      let schema: unknown;
      try {
        schema = JSON.parse(text);
      } catch {
        throw new UnsupportedArgumentType(`${where}: @returnsSchema is not JSON (${text.slice(0, 60)})`);
      }
      if (!schema || typeof schema !== 'object' || Array.isArray(schema))
        throw new UnsupportedArgumentType(`${where}: @returnsSchema must be a JSON Schema object`);
      return { schema: schema as JsonSchema, optional: false };
    }
  }
  return undefined;
}

/** The result schema of a whitelisted function or method node (`{}` when its signature cannot be read). */
function nodeResult(fn: Node | undefined): ResultSchema {
  if (!fn) return { schema: {}, optional: true };
  const signature = fn.getType().getCallSignatures()[0];
  return signature ? resultSchema(signature.getReturnType(), fn) : { schema: {}, optional: true };
}

function firstParameter(fn: Node | undefined): ParameterDeclaration | undefined {
  if (!fn) return undefined;
  if (Node.isArrowFunction(fn) || Node.isFunctionExpression(fn)) return fn.getParameters()[0];
  const signature = fn.getType().getCallSignatures()[0];
  const declaration = signature?.getParameters()[0]?.getValueDeclaration();
  return declaration && Node.isParameterDeclaration(declaration) ? declaration : undefined;
}

/** Adds every file the given files import by relative path (transitively), so types declared there resolve. */
function addRelativeImports(project: Project, files: SourceFile[]): void {
  const queue = [...files];
  const seen = new Set<string>(files.map((f) => f.getFilePath()));
  for (let file = queue.pop(); file; file = queue.pop()) {
    for (const decl of [...file.getImportDeclarations(), ...file.getExportDeclarations()]) {
      const spec = decl.getModuleSpecifierValue();
      if (!spec || !spec.startsWith('.')) continue;
      const base = path.resolve(path.dirname(file.getFilePath()), spec);
      for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')]) {
        if (seen.has(candidate) || !existsSync(candidate)) continue;
        seen.add(candidate);
        queue.push(project.addSourceFileAtPath(candidate));
        break;
      }
    }
  }
}

/** Extracts every whitelisted method of every controller; problems name the controller file and the method. */
export function extractMethods(
  doctypes: DocTypeIR[],
  cwd = process.cwd(),
): { methods: MethodMap; problems: Problem[] } {
  const withController = doctypes.filter((ir) => ir.loaded.controller);
  const methods = new Map<string, MethodIR[]>();
  const problems: Problem[] = [];
  if (withController.length === 0) return { methods, problems };
  // Only the controllers and the files they import by relative path are read: package imports (doctype-service, koa)
  // stay unresolved, which keeps extraction fast (argument types are the controller's own, or its neighbours').
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    compilerOptions: {
      noResolve: true,
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    },
  });
  const files = withController.map((ir) =>
    project.addSourceFileAtPath(path.resolve(cwd, ir.loaded.controller as string)),
  );
  addRelativeImports(project, files);
  for (const [i, ir] of withController.entries()) {
    const file = files[i];
    if (!file) continue;
    const found: MethodIR[] = [];
    const base = modulePath(ir);
    const add = (
      kind: MethodIR['kind'],
      name: string,
      call: CallExpression,
      param: ParameterDeclaration | undefined,
      fn: Node | undefined,
      docs: JSDocable | undefined,
    ) => {
      const where = `${kind === 'document' ? 'method' : 'function'} ${name}`;
      const options = call.getArguments()[0];
      if (options && !Node.isObjectLiteralExpression(options)) {
        const message = `${where}: whitelist options are not an object literal, so the OpenAPI documents show the defaults (the runtime uses the real options)`;
        problems.push({
          file: ir.loaded.controller as string,
          pointer: `/${name}`,
          message,
          severity: 'warning',
        });
      }
      try {
        const schema = argumentSchema(param, where);
        const result = declaredResult(docs, where) ?? nodeResult(fn);
        found.push({
          kind,
          name,
          path: `${base}.${name}`,
          ...literalOptions(call.getArguments()[0]),
          schema,
          jsonArgs: jsonArguments(schema),
          result,
        });
      } catch (err) {
        if (!(err instanceof UnsupportedArgumentType)) throw err;
        problems.push({
          file: ir.loaded.controller as string,
          pointer: `/${name}`,
          message: err.message,
          severity: 'error',
        });
      }
    };
    for (const cls of file.getClasses().filter((c) => c.isDefaultExport())) {
      for (const method of cls.getInstanceMethods()) {
        const call = method
          .getDecorators()
          .map((d) => whitelistCall(d.getCallExpression()))
          .find(Boolean);
        if (call) add('document', method.getName(), call, method.getParameters()[0], method, method);
        const meant = call ? undefined : misspelledHook(method.getName());
        if (meant) {
          problems.push({
            file: ir.loaded.controller as string,
            pointer: `/${method.getName()}`,
            message: `method ${method.getName()} looks like a lifecycle hook but is not one, so it never runs: did you mean ${meant}?`,
            severity: 'warning',
          });
        }
      }
    }
    for (const statement of file.getVariableStatements().filter((s) => s.isExported())) {
      for (const decl of statement.getDeclarations()) {
        const call = whitelistCall(decl.getInitializer());
        if (call && call.getArguments().length === 2)
          add(
            'function',
            decl.getName(),
            call,
            firstParameter(call.getArguments()[1]),
            call.getArguments()[1],
            statement,
          );
      }
    }
    found.sort((a, b) =>
      a.kind + a.name < b.kind + b.name ? -1 : a.kind + a.name > b.kind + b.name ? 1 : 0,
    );
    if (found.length) methods.set(ir.meta.name, found);
  }
  return { methods, problems };
}

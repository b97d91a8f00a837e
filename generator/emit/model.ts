// Emits generated/models/<slug>.ts: the document interface, the metadata literal and the objection model (text from
// generator/ts/declarations.ts, in ts-morph's layout).
import { FIELD_TYPE_INFO, assertNever, isTableType } from '../../runtime/meta/field-types';
import type { FieldMeta } from '../../runtime/meta/types';
import { RUNTIME_INTERNAL, type GeneratorContext } from '../context';
import { className, propertyName } from '../naming';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { quote, tsLiteral } from '../ts/literal';
import { importLine, interfaceText, jsDoc, type PropertyText } from '../ts/declarations';

/** Path of a DocType's model module inside the output folder. */
export const modelPath = (ir: DocTypeIR) => `models/${ir.meta.slug}.ts`;

/** The TypeScript type of one field's value. */
export function fieldTsType(field: FieldMeta, ctx: GeneratorContext): string {
  const info = FIELD_TYPE_INFO[field.fieldtype];
  switch (info.value) {
    case 'string':
      if (field.selectOptions) return [...new Set(field.selectOptions)].map((o) => quote(o)).join(' | ');
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'check':
      return '0 | 1';
    case 'date':
    case 'datetime':
    case 'time':
      return 'string';
    case 'json':
      return 'unknown';
    case 'rows': {
      const target = field.options ? ctx.byName.get(field.options) : undefined;
      return target ? `${className(target.meta.name)}[]` : 'Record<string, unknown>[]';
    }
    case 'none':
      return 'never';
    default:
      return assertNever(info.value);
  }
}

/** The document interface's properties: the standard fields, then the DocType's own with their labels as docs. */
function documentProperties(ir: DocTypeIR, ctx: GeneratorContext): PropertyText[] {
  const standard = [
    ['name', 'string'],
    ['owner', 'string'],
    ['creation', 'string'],
    ['modified', 'string'],
    ['modified_by', 'string'],
    ['docstatus', '0 | 1 | 2'],
    ['idx', 'number'],
    ...(ir.meta.istable
      ? [
          ['parent', 'string'],
          ['parentfield', 'string'],
          ['parenttype', 'string'],
        ]
      : []),
  ] as const;
  return [
    ...standard.map(([name, type]) => ({ name, type })),
    ...ir.meta.fields.map((f) => ({
      name: propertyName(f.fieldname),
      type: isTableType(f.fieldtype) ? fieldTsType(f, ctx) : `${fieldTsType(f, ctx)} | null`,
      optional: !f.reqd,
      docs: f.label.replace(/\*\//g, '*\\/'),
    })),
  ];
}

/** Emits the model module of one DocType. */
export function emitModel(ir: DocTypeIR, ctx: GeneratorContext): string {
  const name = className(ir.meta.name);
  const tables = ir.meta.fields.filter(
    (f) => isTableType(f.fieldtype) && f.options && ctx.byName.has(f.options),
  );
  const childImports = [...new Set(tables.map((f) => f.options as string))]
    .filter((child) => child !== ir.meta.name)
    .sort()
    .map((child) => {
      const target = ctx.byName.get(child) as DocTypeIR;
      const cls = className(target.meta.name);
      return importLine([cls, `${cls}Model`], `./${target.meta.slug}`);
    });
  const relations = tables.map(
    (f) =>
      `      ${propertyName(f.fieldname)}: { relation: Model.HasManyRelation, modelClass: ${className(f.options as string)}Model, ` +
      `join: { from: ${quote(`${ir.meta.tableName}.name`)}, to: ${quote(`tab${f.options}.parent`)} }, ` +
      `filter: { parentfield: ${quote(f.fieldname)}, parenttype: ${quote(ir.meta.name)} } }`,
  );
  const relationMappings = tables.length
    ? `\n  static get relationMappings() {\n    return {\n${relations.join(',\n')}\n    };\n  }\n`
    : '';
  return (
    header('generator/emit/model.ts', ir.loaded.file) +
    importLine(['Model'], 'objection') +
    importLine(['DocTypeMeta'], RUNTIME_INTERNAL, true) +
    childImports.join('') +
    '\n' +
    interfaceText(name, documentProperties(ir, ctx), {
      docs: `A ${ir.meta.name} document as the API returns it.`,
    }) +
    `\n/** Metadata of ${ir.meta.name}, normalized from its DocType file. */\nexport const meta: DocTypeMeta = ${tsLiteral(ir.meta)};\n` +
    '\n' +
    jsDoc(`Objection model over \`${ir.meta.tableName}\`.`) +
    `export class ${name}Model extends Model {\n` +
    `  static tableName = ${quote(ir.meta.tableName)};\n  static idColumn = 'name';\n${relationMappings}}\n` +
    '\n' +
    interfaceText(`${name}Model`, [], { extendsText: `Partial<${name}>` })
  );
}

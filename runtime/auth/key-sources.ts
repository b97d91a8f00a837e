// Custom key sources: `Svc-Authorization-Source: <DocType>` names a DocType whose rows hold api_key/api_secret/user/enabled.
import type { Registry, DocTypeBinding } from '../registry/registry';

/** The fields (and their types) a DocType needs to serve as a key source (SPEC 2.3). */
const REQUIRED: ReadonlyArray<readonly [string, string, string?]> = [
  ['api_key', 'Data'],
  ['api_secret', 'Password'],
  ['user', 'Link', 'User'],
  ['enabled', 'Check'],
];

/** True when the DocType can be a key source: a stored, non-single, non-child DocType with the four fields. */
export function isKeySource(binding: DocTypeBinding): boolean {
  const { meta } = binding;
  if (meta.istable || meta.issingle || meta.isVirtual) return false;
  return REQUIRED.every(([fieldname, fieldtype, options]) => {
    const field = binding.fieldMap.get(fieldname);
    return (
      field !== undefined &&
      field.fieldtype === fieldtype &&
      (options === undefined || field.options === options)
    );
  });
}

/**
 * Resolves the key-source header: absent or `User` → undefined (the User DocType); a registered key-source DocType →
 * its binding; anything else (unknown DocType, wrong fields, garbage) → null, which the caller answers with 401.
 */
export function keySource(registry: Registry, header: string): DocTypeBinding | undefined | null {
  if (header === '' || header === 'User') return undefined;
  if (header.length > 140) return null;
  const binding = registry.get(header);
  return binding && isKeySource(binding) ? binding : null;
}

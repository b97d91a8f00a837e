// A DocType's body validator loaded at its first call. Generated route modules and the registry refer to their
// validator module through this, so a start loads none of them (they are most of the generated code: 26 MB of the
// 35 MB with the 766 fixture DocTypes) and the start-up bundle leaves them out.
import type { BodyValidator } from './registry';

/** A validator that requires its module (`load`) on the first call and passes `errors` on after every call. */
export function lazyValidator(load: () => { validateBody: BodyValidator }): BodyValidator {
  let validate: BodyValidator | undefined;
  const lazy: BodyValidator = (data) => {
    validate ??= load().validateBody;
    const valid = validate(data);
    lazy.errors = validate.errors;
    return valid;
  };
  return lazy;
}

// One entry point for dropping authentication caches after a document write.
import { forgetApiKeys } from './api-keys';
import { forgetBearerTokens } from './bearer-tokens';
import { forgetSettings } from './settings';
import { forgetUsers } from './users';

/** Drops the caches built from `doctype`: users and keys (User, Has Role), key sources, tokens, System Settings. */
export function forgetAuthCaches(doctype: string): void {
  if (doctype === 'User' || doctype === 'Has Role') {
    forgetUsers();
    forgetApiKeys('User');
  } else if (doctype === 'OAuth Bearer Token') {
    forgetBearerTokens();
  } else if (doctype === 'System Settings') {
    forgetSettings();
  } else {
    forgetApiKeys(doctype); // any DocType may serve as a custom key source
  }
}

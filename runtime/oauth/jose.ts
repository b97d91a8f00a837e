// jose (JWT signing, JWK import and export) for this CommonJS runtime: the package ships ES modules only, which Node
// (>= 20.19) loads through require; its types are imported as an ES module's.
import type * as JoseModule from 'jose' with { 'resolution-mode': 'import' };

/** jose's exports, loaded at the first call (a process that signs nothing does not hold it in memory). */
export function jose(): typeof JoseModule {
  return require('jose') as typeof JoseModule;
}

/** A JSON Web Key. */
export type JWK = JoseModule.JWK;
/** A WebCrypto key, as jose returns it. */
export type CryptoKey = JoseModule.CryptoKey;

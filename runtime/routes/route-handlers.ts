// One handler per operation of the route table: a row names its operation, this map runs it.
import type { AppContext } from '../http/state';
import * as bulk from './bulk-handlers';
import { createDocsHandlers } from './docs-page';
import { serveFile } from '../files/serve-file';
import * as probes from './health-handlers';
import { createEventStream } from './event-handlers';
import { exportDocuments } from './export-handler';
import { jobStatus } from './job-handlers';
import { metrics } from './metrics-handler';
import * as openid from '../oauth/discovery';
import { signInPage } from '../oauth/sign-in-page';
import { callMethod } from './method-routes';
import { createOpenApiHandler } from './openapi-document';
import * as resources from './resource-handlers';
import type { Operation, RouteParams, RouteRow } from '../http/route-row';
import type { RequestAuthenticator } from '../middleware/authenticate';

/** Runs a matched row: the path's captures are decoded, the row gives the success status and envelope. */
export type RouteHandler = (ctx: AppContext, params: RouteParams, row: RouteRow) => Promise<void> | void;

/** A handler for every operation a row may name (the type makes a missing one a compile error). */
export type RouteHandlers = Readonly<Record<Operation, RouteHandler>>;

/** Options the handlers need. */
export interface RouteHandlerOptions {
  /** The generated folder whose openapi/ documents and docs/schema.md are served. */
  generatedDir: string;
  /** Authenticates a request again: an open event stream checks that its credentials still hold. */
  authenticateAgain: RequestAuthenticator;
}

/** The handlers of the route table's operations. */
export function createRouteHandlers(options: RouteHandlerOptions): RouteHandlers {
  const docs = createDocsHandlers(options.generatedDir);
  return {
    list: resources.listDocuments,
    create: resources.createDocument,
    get: resources.getDocument,
    update: resources.updateDocument,
    delete: resources.deleteDocument,
    copy: resources.copyDocument,
    count: resources.countDocuments,
    meta: resources.docTypeMeta,
    documentMethod: resources.runDocumentMethod,
    method: (ctx, p) => callMethod(ctx, p.method),
    openapi: createOpenApiHandler(options.generatedDir),
    file: serveFile,
    bulkUpdate: bulk.bulkUpdate,
    bulkDelete: bulk.bulkDelete,
    bulkInsert: bulk.bulkInsert,
    bulkUpdateAcross: bulk.bulkUpdateAcross,
    bulkDeleteAcross: bulk.bulkDeleteAcross,
    health: probes.health,
    ready: probes.ready,
    metrics,
    jobStatus,
    export: exportDocuments,
    eventStream: createEventStream(options.authenticateAgain),
    signIn: signInPage,
    docs: docs.docs,
    docsAsset: docs.docsAsset,
    openidConfiguration: openid.openidConfiguration,
    jwks: openid.jwks,
  };
}

import type { CoreClientConnection } from "./core-connection.js";

/** A page route's claimant, namespaced by the Core connection that carried it, so one client cannot touch another's. */
export function connectionClaimant(connection: CoreClientConnection, claimant: string): string {
  return `${connection.id}/${claimant}`;
}

import { createContext, useContext, useEffect, useMemo, useState, useSyncExternalStore, type ReactNode } from "react";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Pedelec } from "../pedelec.js";
import type { PedelecOptions } from "../types.js";
import { ClientStore } from "./client-store.js";

const PedelecContext = createContext<ClientStore | null>(null);

/**
 * Props of `PedelecProvider`.
 *
 * @example
 * ```tsx
 * const props: PedelecProviderProps = { options: { bridgeTimeoutMs: 10_000 }, children: <App /> };
 * ```
 */
export interface PedelecProviderProps {
  /**
   * The client to share. Without it the provider makes one with `new Pedelec(options)` in the browser, after the
   * first render (never on the server), and keeps it for as long as it stays mounted. Changing it ends the sessions
   * of the old client that hooks below hold and creates them again with the new one.
   */
  client?: Pedelec;
  /** Options of the client the provider makes itself; read once, when it makes it. Ignored with `client`. */
  options?: PedelecOptions;
  /** The part of the app that uses Pedelec. */
  children?: ReactNode;
}

/**
 * Shares one Pedelec client with the components below it (`usePedelec`, `usePedelecSession`). Put it near the root,
 * once: the client it makes holds the page's connection to the extension.
 *
 * @example
 * ```tsx
 * createRoot(document.getElementById("root")!).render(
 *   <PedelecProvider>
 *     <Chat />
 *   </PedelecProvider>,
 * );
 * ```
 */
export function PedelecProvider({ client, options, children }: PedelecProviderProps): ReactNode {
  // A client made here lives in this component's state, so Strict Mode's second render reuses it.
  const [ownStore] = useState(() => new ClientStore(undefined, options));
  // Pure (a given client is only wrapped), so React may make it again whenever it likes.
  const givenStore = useMemo(() => (client === undefined ? undefined : new ClientStore(client, undefined)), [client]);
  useEffect(() => {
    if (client === undefined) ownStore.ensure();
  }, [client, ownStore]);
  return <PedelecContext.Provider value={givenStore ?? ownStore}>{children}</PedelecContext.Provider>;
}

/** The provider's client store; throws when there is no `PedelecProvider` above. */
export function usePedelecClientStore(hookName: string): ClientStore {
  const store = useContext(PedelecContext);
  if (store === null) {
    throw new PedelecError("INVALID_INPUT", `${hookName}() needs a <PedelecProvider> above the component that calls it`);
  }
  return store;
}

const noClient = (): null => null;

/**
 * The client of the nearest `PedelecProvider`. Null during server rendering and hydration, and (when the provider
 * makes its own client) during the first render in the browser; the component renders again once it is there.
 * Throws `INVALID_INPUT` when there is no `PedelecProvider` above.
 *
 * @example
 * ```tsx
 * function ConnectButton() {
 *   const pedelec = usePedelec();
 *   return <button disabled={!pedelec} onClick={() => void pedelec?.checkAvailability().then(show)}>Check</button>;
 * }
 * ```
 */
export function usePedelec(): Pedelec | null {
  const store = usePedelecClientStore("usePedelec");
  return useSyncExternalStore(store.subscribe, store.get, noClient);
}

import { z } from "zod";

// The extension's CSP forbids eval; without this zod probes for it when a schema is built and logs a CSP violation.
// A module of its own, imported before anything else, so it runs before the protocol's schemas are built.
z.config({ jitless: true });

// Zod's functional build ("zod/mini"), for the schemas Core checks before it listens: core-request-frame.ts and what it
// uses. Building them with the classic build took half of Core's start-up work; these build in a fraction of that.
// Their schemas nest in classic ones and the other way round, and parse the same. Import it as a namespace
// (`import * as z`), so a bundle keeps only what is used.
import { config } from "zod/mini";
import en from "zod/v4/locales/en.js";

export * from "zod/mini";

// The same English messages the classic build sets when it first builds a schema (it keeps one set before it).
config(en());

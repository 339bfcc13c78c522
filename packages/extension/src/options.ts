import { z } from "zod";
import { runExtensionPage } from "./extension-page-client.js";
import { OptionsPage } from "./options-page.js";

// Extension CSP forbids eval; without this zod would probe for it and log a CSP violation.
z.config({ jitless: true });

const page = new OptionsPage(document);
runExtensionPage(document, page.requestFor, page.render);

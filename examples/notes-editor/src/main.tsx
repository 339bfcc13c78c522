// The page's entry: one Pedelec client for the app (made by the provider, in the browser), and the editor below it.
import { PedelecProvider } from "@kaoruisaac/pedelec/react";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { NotesEditorApp } from "./notes-editor-app.js";

const root = document.getElementById("root");
if (root === null) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <PedelecProvider>
      <NotesEditorApp />
    </PedelecProvider>
  </StrictMode>,
);

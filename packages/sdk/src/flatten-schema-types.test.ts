// The build step that writes zod-inferred types out of the bundled declarations, on small declaration files.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkFlattenedTypes, createInMemoryProgram, declarationDiagnostics, flattenSchemaTypes } from "../scripts/flatten-schema-types.mjs";

// In-memory files placed in the package, so "zod" resolves to the installed one; nothing is written there.
const fileName = fileURLToPath(new URL("../dist/flatten-check/chunk.d.ts", import.meta.url));

const declarations = `import { z } from 'zod';

declare const noteSchema: z.ZodObject<{
    title: z.ZodString;
    tags: z.ZodOptional<z.ZodArray<z.ZodString>>;
}, z.core.$strip>;
/** A note. */
type Note$1 = z.infer<typeof noteSchema>;
declare const jsonSchema: z.ZodJSONSchema;
type Json = z.infer<typeof jsonSchema>;
declare const requests: {
    readonly add: { readonly result: z.ZodObject<{ id: z.ZodNumber }, z.core.$strip> };
    readonly list: { readonly result: z.ZodArray<z.ZodString> };
};
type RequestName = keyof typeof requests;
type RequestResult<T extends RequestName> = z.infer<(typeof requests)[T]["result"]>;
declare const CODES: readonly ["A", "B"];
type Code = (typeof CODES)[number];
/** The public name of a note. */
type Note = Note$1;
interface Shelf {
    notes: Note$1[];
    data: Json;
    code: Code;
    added: RequestResult<"add">;
}

export type { Code, Json, Note, RequestResult, Shelf };
`;

function flatten(text: string): Map<string, string> {
  return flattenSchemaTypes(new Map([[fileName, text]]), { libraryModule: "zod" }).files;
}

describe("flattenSchemaTypes", () => {
  it("writes zod-inferred aliases out as the types they are, so the declarations need no zod", () => {
    const flattened = flatten(declarations);
    const text = flattened.get(fileName)!;
    expect(text).not.toMatch(/zod|z\.|noteSchema|jsonSchema|requests/);
    // The public alias keeps its own comment; the bundler's copy goes with its declaration.
    expect(text).toContain("/** The public name of a note. */");
    expect(text).not.toContain("/** A note. */");
    expect(text).toMatch(/type Note = \{\s+title: string;\s+tags\?: string\[\] \| undefined;\s+\};/);
    expect(text).toMatch(/type Json = string \| number \| boolean \| Json\[\] \| \{\s+\[key: string\]: Json;\s+\} \| null;/);
    expect(text).toContain('type Code = "A" | "B";');
    expect(text).toMatch(/type RequestResult<T extends RequestName> = \{\s+add: \{\s+id: number;\s+\};\s+list: string\[\];\s+\}\[T\];/);
    // The bundler's renamed copy gives way to the public name everywhere.
    expect(text).not.toContain("Note$1");
    expect(text).toContain("notes: Note[];");

    const program = createInMemoryProgram(flattened);
    expect(declarationDiagnostics(program, flattened)).toEqual([]);
    expect(checkFlattenedTypes(new Map([[fileName, declarations]]), flattened)).toMatchObject({ failures: [] });
  });

  it("reports a written-out alias that is not the type it replaced", () => {
    const flattened = flatten(declarations);
    const altered = new Map([[fileName, flattened.get(fileName)!.replace("title: string;", "title: number;")]]);
    const { checks, failures } = checkFlattenedTypes(new Map([[fileName, declarations]]), altered);
    expect(checks).toBeGreaterThan(0);
    expect(failures.length).toBeGreaterThan(0);
  });

  it("refuses a public declaration that only zod can type", () => {
    const publicSchema = `import { z } from 'zod';\ndeclare const noteSchema: z.ZodString;\nexport { noteSchema };\n`;
    expect(() => flatten(publicSchema)).toThrow(/"noteSchema" is public and typed by zod/);
  });
});

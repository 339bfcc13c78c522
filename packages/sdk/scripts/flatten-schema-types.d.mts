import type { CompilerOptions, Program } from "typescript";

/** Compiler options the published declarations are checked with (strict, NodeNext, no skipLibCheck). */
export declare const declarationCheckOptions: CompilerOptions;

/** A program over in-memory files (absolute path → text); everything else is read from disk. */
export declare function createInMemoryProgram(files: Map<string, string>, options?: CompilerOptions): Program;

/** The formatted diagnostics of the in-memory files; empty when they type-check. */
export declare function declarationDiagnostics(program: Program, files: Map<string, string>): string[];

/** Writes out every alias that depends on the library (see flatten-schema-types.mjs). */
export declare function flattenSchemaTypes(
  files: Map<string, string>,
  options?: { libraryModule?: string },
): { files: Map<string, string>; flattened: string[] };

/** Checks each written-out alias against the one it replaced; returns the failures. */
export declare function checkFlattenedTypes(
  originalFiles: Map<string, string>,
  flattenedFiles: Map<string, string>,
  options?: { libraryModule?: string },
): { checks: number; failures: string[] };

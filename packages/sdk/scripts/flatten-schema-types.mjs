// The SDK's public types come partly from the protocol, where they are inferred from zod schemas
// (`type SessionInfo = z.infer<typeof sessionInfoSchema>`). Bundled as they are, the declarations would import "zod"
// and carry every schema's declaration, so an application would need zod installed for the SDK's types to mean
// anything. This step asks the type checker for what each such alias resolves to and writes that out instead, then
// drops the schema declarations and the import. While at it, it writes out aliases over private constants and lets
// the bundler's renamed copies (`ProviderCode$1`) give way to the public name, so readers see types, not private names.
// It only rewrites; checkFlattenedTypes proves each written-out alias is the very type it replaced.
import { dirname } from "node:path";
import ts from "typescript";

const printFlags =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.InTypeAlias |
  ts.NodeBuilderFlags.MultilineObjectLiterals |
  ts.NodeBuilderFlags.UseStructuralFallback;

const probePrefix = "__PedelecFlattenProbe";
const maximumRounds = 6;

/** Compiler options for the in-memory programs: the published declarations are read as an ESM consumer would. */
export const declarationCheckOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  types: [],
  skipLibCheck: false,
};

/**
 * A program over in-memory files (absolute path → text); anything else (lib files, node_modules) is read from disk,
 * so imports resolve as they would next to those paths.
 */
export function createInMemoryProgram(files, options = declarationCheckOptions) {
  const host = ts.createCompilerHost(options, true);
  const disk = { fileExists: host.fileExists, readFile: host.readFile, getSourceFile: host.getSourceFile, directoryExists: host.directoryExists };
  const directories = new Set([...files.keys()].flatMap((fileName) => ancestors(dirname(fileName))));
  host.fileExists = (fileName) => files.has(fileName) || disk.fileExists(fileName);
  host.readFile = (fileName) => files.get(fileName) ?? disk.readFile(fileName);
  host.directoryExists = (directory) => directories.has(directory) || (disk.directoryExists?.(directory) ?? true);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (files.has(fileName)) return ts.createSourceFile(fileName, files.get(fileName), languageVersion, true);
    // Lib files, React's and zod's declarations are the same in every program of one build: parse them once.
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    if (!diskSourceFiles.has(key)) diskSourceFiles.set(key, disk.getSourceFile(fileName, languageVersion, onError, shouldCreate));
    return diskSourceFiles.get(key);
  };
  return ts.createProgram({ rootNames: [...files.keys()], options, host });
}

const diskSourceFiles = new Map();

/** Every diagnostic of the in-memory files, formatted; empty when they type-check. */
export function declarationDiagnostics(program, files) {
  const diagnostics = [...files.keys()].flatMap((fileName) => {
    const sourceFile = program.getSourceFile(fileName);
    return [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)];
  });
  return diagnostics.map((diagnostic) => formatDiagnostic(diagnostic));
}

/**
 * Rewrites every type alias that depends on `libraryModule` into the type it resolves to, drops the library's import
 * and the (unexported) declarations whose types come from it. Throws when a public declaration still needs it.
 */
export function flattenSchemaTypes(files, { libraryModule = "zod" } = {}) {
  const firstProgram = createInMemoryProgram(files, { ...declarationCheckOptions, skipLibCheck: true });
  const plans = new Map();
  for (const fileName of files.keys()) {
    const plan = planFile(firstProgram, fileName, libraryModule);
    if (plan !== undefined) plans.set(fileName, plan);
  }
  if (plans.size === 0) return { files, flattened: [] };

  // Library aliases that printing runs into (zod's recursive JSON type, say) are written out too; each round may
  // reveal more, so this repeats until a round finds nothing new.
  let program = firstProgram;
  for (let round = 0; ; round += 1) {
    if (round === maximumRounds) throw new Error(`${libraryModule} types keep appearing after ${maximumRounds} rounds`);
    const probedFiles = new Map(files);
    for (const [fileName, plan] of plans) probedFiles.set(fileName, files.get(fileName) + probeText(plan));
    program = createInMemoryProgram(probedFiles, { ...declarationCheckOptions, skipLibCheck: true });
    let foundNew = false;
    for (const [fileName, plan] of plans) {
      const printed = printPlan(program, fileName, plan);
      for (const reference of printed.unknownReferences) {
        plan.libraryReferences.set(reference, { probe: `${probePrefix}Reference${plan.libraryReferences.size}`, name: undefined });
        foundNew = true;
      }
      plan.printed = printed;
    }
    if (!foundNew) break;
  }

  const output = new Map(files);
  const flattened = [];
  for (const [fileName, plan] of plans) {
    output.set(fileName, rewriteFile(program.getSourceFile(fileName), files.get(fileName), plan));
    flattened.push(...plan.aliases.map((alias) => alias.name));
  }
  return { files: output, flattened };
}

/**
 * Proves the rewrite changed no type: beside each original alias, its flattened text must denote an identical type.
 * Returns the failures (empty when every alias matches).
 */
export function checkFlattenedTypes(originalFiles, flattenedFiles, { libraryModule = "zod" } = {}) {
  const firstProgram = createInMemoryProgram(originalFiles, { ...declarationCheckOptions, skipLibCheck: true });
  const checkFiles = new Map(originalFiles);
  let checks = 0;
  for (const fileName of originalFiles.keys()) {
    const plan = planFile(firstProgram, fileName, libraryModule);
    if (plan === undefined) continue;
    const flattenedSource = ts.createSourceFile(fileName, flattenedFiles.get(fileName), ts.ScriptTarget.ES2022, true);
    const flattenedAliases = new Map(
      flattenedSource.statements.filter(ts.isTypeAliasDeclaration).map((statement) => [statement.name.text, statement]),
    );
    const lines = [
      "",
      `type ${probePrefix}Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;`,
      `type ${probePrefix}Assert<T extends true> = T;`,
    ];
    // Aliases the rewrite added (written-out library types) exist only in the flattened file.
    const originalNames = new Set(plan.takenNames);
    const synthesizedNames = new Set([...flattenedAliases.keys()].filter((name) => !originalNames.has(name)));
    const renamed = (text) => text.replace(/[A-Za-z_$][\w$]*/g, (name) => (synthesizedNames.has(name) ? `${probePrefix}Copy_${name}` : name));
    for (const statement of flattenedSource.statements) {
      if (!ts.isTypeAliasDeclaration(statement)) continue;
      const name = statement.name.text;
      const isTarget = plan.aliases.some((alias) => alias.name === name);
      const isSynthesized = synthesizedNames.has(name);
      if (!isTarget && !isSynthesized) continue;
      // The copy's own name and the synthesized names it uses get a prefix; every other name means the original's.
      const copyName = `${probePrefix}Copy_${name}`;
      const parameters = statement.typeParameters
        ? `<${statement.typeParameters.map((parameter) => parameter.getText(flattenedSource)).join(", ")}>`
        : "";
      lines.push(`type ${copyName}${parameters} = ${renamed(statement.type.getText(flattenedSource))};`);
    }
    for (const alias of plan.aliases) {
      // A renamed alias must now be what the alias it gave way to is.
      const flattenedName = plan.renames.get(alias.name) ?? alias.name;
      if (!flattenedAliases.has(flattenedName)) {
        lines.push(`type ${probePrefix}Missing_${alias.name} = ${probePrefix}Assert<false>;`);
        continue;
      }
      const copyName = `${probePrefix}Copy_${flattenedName}`;
      const instances = alias.keys === undefined ? [""] : alias.keys.map((key) => `<${JSON.stringify(key)}>`);
      for (const instance of instances) {
        lines.push(
          `type ${probePrefix}Check${checks} = ${probePrefix}Assert<${probePrefix}Equal<${alias.name}${instance}, ${copyName}${instance}>>;`,
        );
        checks += 1;
      }
    }
    checkFiles.set(fileName, `${originalFiles.get(fileName) + lines.join("\n")}\n`);
  }
  // Checked as .ts files: skipLibCheck (which spares zod's and React's declarations) would skip .d.ts ones, assertions
  // included. Their imports of one another ("./chunks/x.js") find the .ts files as they found the .d.ts ones.
  const asSources = new Map([...checkFiles].map(([name, text]) => [name.replace(/\.d\.ts$/, ".ts"), text]));
  const program = createInMemoryProgram(asSources, { ...declarationCheckOptions, skipLibCheck: true });
  return { checks, failures: declarationDiagnostics(program, asSources) };
}

function planFile(program, fileName, libraryModule) {
  const sourceFile = program.getSourceFile(fileName);
  const checker = program.getTypeChecker();
  const libraryNames = new Set();
  const libraryImports = [];
  for (const statement of sourceFile.statements) {
    if (!ts.isImportDeclaration(statement) || !isLibrarySpecifier(statement.moduleSpecifier.text, libraryModule)) continue;
    libraryImports.push(statement);
    const clause = statement.importClause;
    if (clause?.name) libraryNames.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) libraryNames.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) libraryNames.add(element.name.text);
  }
  const mentions = (node, schemaConstants) => mentionsLibrary(node, libraryNames, schemaConstants, libraryModule);
  const exported = exportedNames(sourceFile);

  // Declarations typed by the library (the schemas): dropped, so they must not be public.
  const schemaStatements = [];
  const schemaConstants = new Set();
  for (const statement of sourceFile.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const typed = statement.declarationList.declarations.filter((declaration) => declaration.type && mentions(declaration.type, new Set()));
    if (typed.length === 0) continue;
    if (typed.length !== statement.declarationList.declarations.length)
      throw new Error(`${fileName}: mixed declaration ${statement.getText(sourceFile).slice(0, 80)}`);
    for (const declaration of typed) {
      const name = declaration.name.getText(sourceFile);
      if (exported.has(name)) throw new Error(`${fileName}: "${name}" is public and typed by ${libraryModule}; it cannot be written out`);
      schemaConstants.add(name);
    }
    schemaStatements.push(statement);
  }
  if (libraryImports.length === 0 && schemaStatements.length === 0) return undefined;

  // Also written out: an alias over a private constant (`type ErrorCode = (typeof ERROR_CODES)[number]`), whose
  // readers could not see the values, and an alias that only renames one written out (`type ProviderCode =
  // ProviderCode$1`, the bundler's name for the protocol's alias), whose readers would see a private name.
  const privateConstants = new Set(
    sourceFile.statements
      .flatMap((statement) =>
        ts.isVariableStatement(statement) ? statement.declarationList.declarations.map((declaration) => declaration.name.getText(sourceFile)) : [],
      )
      .filter((name) => !exported.has(name)),
  );
  const targets = new Set();
  for (const statement of sourceFile.statements) {
    if (ts.isTypeAliasDeclaration(statement) && mentions(statement.type, new Set([...schemaConstants, ...privateConstants])))
      targets.add(statement.name.text);
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const statement of sourceFile.statements) {
      if (!ts.isTypeAliasDeclaration(statement) || targets.has(statement.name.text) || statement.typeParameters) continue;
      const type = statement.type;
      if (ts.isTypeReferenceNode(type) && !type.typeArguments && ts.isIdentifier(type.typeName) && targets.has(type.typeName.text)) {
        targets.add(statement.name.text);
        grew = true;
      }
    }
  }

  const aliases = [];
  for (const statement of sourceFile.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || !targets.has(statement.name.text)) continue;
    const parameters = statement.typeParameters ?? [];
    if (parameters.length > 1) throw new Error(`${fileName}: ${statement.name.text} has several type parameters; write it out by hand`);
    let keys;
    if (parameters.length === 1) {
      const constraint = parameters[0].constraint && checker.getTypeAtLocation(parameters[0].constraint);
      const members = constraint === undefined ? [] : constraint.isUnion() ? constraint.types : [constraint];
      if (members.length === 0 || !members.every((member) => member.isStringLiteral())) {
        throw new Error(`${fileName}: ${statement.name.text}'s type parameter is not constrained to string literals`);
      }
      keys = members.map((member) => member.value);
    }
    aliases.push({ name: statement.name.text, statement, keys, parameter: parameters[0]?.name.text });
  }
  // The bundler renames the protocol's alias when the SDK exports one of the same name (`type ProviderCode =
  // ProviderCode$1`): the two are one type, so the bundler's name gives way to the public one.
  const aliasNames = new Set(sourceFile.statements.filter(ts.isTypeAliasDeclaration).map((statement) => statement.name.text));
  const renames = new Map();
  for (const statement of sourceFile.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || statement.typeParameters || !exported.has(statement.name.text)) continue;
    const type = statement.type;
    if (!ts.isTypeReferenceNode(type) || type.typeArguments || !ts.isIdentifier(type.typeName)) continue;
    const renamed = type.typeName.text;
    const declaration = aliasNames.has(renamed) ? aliasDeclaration(sourceFile, renamed) : undefined;
    if (declaration === undefined || declaration.typeParameters || renames.has(renamed) || !/\$\d+$/.test(renamed)) continue;
    renames.set(renamed, statement.name.text);
  }

  return {
    libraryNames,
    libraryImports,
    schemaStatements,
    aliases,
    renames,
    libraryReferences: new Map(),
    synthesizedNames: new Set(),
    takenNames: new Set(
      sourceFile.statements.flatMap((statement) => (statement.name && ts.isIdentifier(statement.name) ? [statement.name.text] : [])),
    ),
    printed: undefined,
  };
}

function probeText(plan) {
  const lines = [""];
  for (const alias of plan.aliases) {
    if (alias.keys === undefined) continue;
    for (const [index, key] of alias.keys.entries()) lines.push(`type ${probePrefix}${alias.name}_${index} = ${alias.name}<${JSON.stringify(key)}>;`);
  }
  for (const [reference, entry] of plan.libraryReferences) lines.push(`type ${entry.probe} = ${reference};`);
  return `${lines.join("\n")}\n`;
}

/** Prints every alias of the plan from the probed program; library references become local names where known. */
function printPlan(program, fileName, plan) {
  const checker = program.getTypeChecker();
  const sourceFile = program.getSourceFile(fileName);
  const aliasDeclarations = new Map(sourceFile.statements.filter(ts.isTypeAliasDeclaration).map((statement) => [statement.name.text, statement]));
  const declaredType = (name) => checker.getDeclaredTypeOfSymbol(checker.getSymbolAtLocation(aliasDeclarations.get(name).name));

  // A library reference stands for a type: use the flattened alias that is that very type, or write one out.
  // A public name (no bundler suffix) reads better where several aliases are that type.
  const targetTypes = plan.aliases
    .filter((alias) => alias.keys === undefined)
    .map((alias) => [alias.name, declaredType(alias.name)])
    .sort(([first], [second]) => Number(first.includes("$")) - Number(second.includes("$")));
  for (const [, entry] of plan.libraryReferences) {
    if (entry.name !== undefined) continue;
    const type = declaredType(entry.probe);
    const same = targetTypes.find(
      ([, target]) => target === type || (checker.isTypeAssignableTo(target, type) && checker.isTypeAssignableTo(type, target)),
    );
    if (same) {
      entry.name = same[0];
    } else {
      entry.name = uniqueName(plan, entry.probe.replace(probePrefix, "Schema"));
      plan.synthesizedNames.add(entry.name);
      entry.synthesized = true;
    }
  }

  const unknownReferences = new Set();
  const printer = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed });
  const print = (type, enclosing) => {
    const node = checker.typeToTypeNode(type, enclosing, printFlags);
    if (node === undefined) throw new Error(`${fileName}: the checker could not print a type near ${enclosing.getText(sourceFile).slice(0, 80)}`);
    const replaced = replaceLibraryReferences(node, plan, printer, sourceFile, unknownReferences);
    return printer.printNode(ts.EmitHint.Unspecified, replaced, sourceFile);
  };

  const texts = new Map();
  for (const alias of plan.aliases) {
    const declaration = aliasDeclarations.get(alias.name);
    if (alias.keys === undefined) {
      texts.set(alias.name, print(declaredType(alias.name), declaration));
      continue;
    }
    const members = alias.keys.map((key, index) => {
      const probe = `${probePrefix}${alias.name}_${index}`;
      const text = print(declaredType(probe), aliasDeclarations.get(probe));
      return `    ${propertyName(key)}: ${text.replaceAll("\n", "\n    ")};`;
    });
    texts.set(alias.name, `{\n${members.join("\n")}\n}[${alias.parameter}]`);
  }
  const synthesized = new Map();
  for (const [, entry] of plan.libraryReferences) {
    if (!entry.synthesized) continue;
    synthesized.set(entry.name, print(declaredType(entry.probe), aliasDeclarations.get(entry.probe)));
  }
  return { texts, synthesized, unknownReferences };
}

function replaceLibraryReferences(node, plan, printer, sourceFile, unknownReferences) {
  const visit = (current) => {
    if (isLibraryTypeNode(current, plan.libraryNames)) {
      const text = printer.printNode(ts.EmitHint.Unspecified, current, sourceFile);
      const entry = plan.libraryReferences.get(text);
      if (entry?.name !== undefined) return ts.factory.createTypeReferenceNode(entry.name);
      unknownReferences.add(text);
      return current;
    }
    return ts.visitEachChild(current, visit, ts.nullTransformationContext);
  };
  return visit(node);
}

function rewriteFile(sourceFile, text, plan) {
  const edits = [];
  const removed = [...plan.libraryImports, ...plan.schemaStatements];
  for (const [name] of plan.renames) removed.push(aliasDeclaration(sourceFile, name));
  for (const statement of removed) edits.push({ start: statement.getFullStart(), end: statement.end, text: "" });
  const renamed = (printed) => printed.replace(/[A-Za-z_$][\w$]*/g, (name) => plan.renames.get(name) ?? name);
  const written = new Map();
  for (const alias of plan.aliases) written.set(alias.name, plan.printed.texts.get(alias.name));
  // The public alias takes the type of the one it renamed: written out, or as the bundler had it.
  for (const [from, to] of plan.renames) {
    if (!written.has(to)) written.set(to, written.get(from) ?? aliasDeclaration(sourceFile, from).type.getText(sourceFile));
    written.delete(from);
  }
  for (const [name, type] of written) {
    const declaration = aliasDeclaration(sourceFile, name);
    edits.push({ start: declaration.type.getStart(sourceFile), end: declaration.type.end, text: renamed(type) });
  }
  // Every other mention of a renamed alias (heritage clauses, members, the chunk's export list) takes the new name.
  const covered = (position) => edits.some((edit) => edit.start <= position && position < edit.end);
  const visit = (node) => {
    if (ts.isIdentifier(node) && plan.renames.has(node.text) && !covered(node.getStart(sourceFile))) {
      edits.push({ start: node.getStart(sourceFile), end: node.end, text: plan.renames.get(node.text) });
    }
    ts.forEachChild(node, visit);
  };
  if (plan.renames.size > 0) visit(sourceFile);
  edits.sort((first, second) => second.start - first.start);
  let output = text;
  for (const edit of edits) output = output.slice(0, edit.start) + edit.text + output.slice(edit.end);
  const synthesized = [...plan.printed.synthesized].map(([name, type]) => `type ${name} = ${renamed(type)};\n`);
  return output.replace(/^\n+/, "") + synthesized.join("");
}

function aliasDeclaration(sourceFile, name) {
  return sourceFile.statements.find((statement) => ts.isTypeAliasDeclaration(statement) && statement.name.text === name);
}

function mentionsLibrary(node, libraryNames, schemaConstants, libraryModule) {
  let found = false;
  const visit = (current) => {
    if (found) return;
    if (ts.isTypeReferenceNode(current) && libraryNames.has(leftmost(current.typeName))) found = true;
    else if (
      ts.isExpressionWithTypeArguments(current) &&
      ts.isIdentifier(leftmostExpression(current.expression)) &&
      libraryNames.has(leftmostExpression(current.expression).text)
    )
      found = true;
    else if (ts.isTypeQueryNode(current)) {
      const name = leftmost(current.exprName);
      if (libraryNames.has(name) || schemaConstants.has(name)) found = true;
    } else if (
      ts.isImportTypeNode(current) &&
      ts.isLiteralTypeNode(current.argument) &&
      isLibrarySpecifier(current.argument.literal.text, libraryModule)
    )
      found = true;
    if (!found) ts.forEachChild(current, visit);
  };
  visit(node);
  return found;
}

function isLibraryTypeNode(node, libraryNames) {
  if (ts.isTypeReferenceNode(node)) return libraryNames.has(leftmost(node.typeName));
  if (ts.isTypeQueryNode(node)) return libraryNames.has(leftmost(node.exprName));
  return false;
}

function isLibrarySpecifier(specifier, libraryModule) {
  return specifier === libraryModule || specifier.startsWith(`${libraryModule}/`);
}

function leftmost(entityName) {
  return ts.isIdentifier(entityName) ? entityName.text : leftmost(entityName.left);
}

function leftmostExpression(expression) {
  return ts.isPropertyAccessExpression(expression) ? leftmostExpression(expression.expression) : expression;
}

function exportedNames(sourceFile) {
  const names = new Set();
  for (const statement of sourceFile.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.add((element.propertyName ?? element.name).text);
    } else if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isVariableStatement(statement))
        for (const declaration of statement.declarationList.declarations) names.add(declaration.name.getText(sourceFile));
      else if (statement.name) names.add(statement.name.text);
    }
  }
  return names;
}

function uniqueName(plan, base) {
  let name = base;
  for (let suffix = 1; plan.takenNames.has(name); suffix += 1) name = `${base}${suffix}`;
  plan.takenNames.add(name);
  return name;
}

function propertyName(key) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
}

function ancestors(directory) {
  const list = [];
  for (let current = directory; ; current = dirname(current)) {
    list.push(current);
    if (dirname(current) === current) return list;
  }
}

function formatDiagnostic(diagnostic) {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${diagnostic.file.fileName}:${line + 1}:${character + 1} ${message}`;
}

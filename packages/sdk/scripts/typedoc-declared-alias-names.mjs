// A TypeDoc plugin. TypeDoc writes a property's type from what the checker resolved it to. Where a declaration names
// a documented alias (`argsSchema: ToolArgsSchema`) but the checker has lost that name (the alias is a conditional type
// resolved on the spot), the page would spell out the whole structure instead, and validation would ask for a comment
// on each of its members. This puts back the name the declaration wrote.
import { Converter, ReferenceType, ReflectionKind, ReflectionType } from "typedoc";
import ts from "typescript";

/** @param {import("typedoc").Application} app */
export function load(app) {
  // The checker is only reachable while a program is being converted; the types are only final once it is done.
  const checkers = new Map();
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (reflection.kindOf(ReflectionKind.Property)) checkers.set(reflection.id, context.checker);
  });
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const reflection of context.project.getReflectionsByKind(ReflectionKind.Property)) {
      if (!(reflection.type instanceof ReflectionType)) continue;
      const declaration = context.getSymbolFromReflection(reflection)?.declarations?.[0];
      const typeNode = declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) ? declaration.type : undefined;
      if (typeNode === undefined || !ts.isTypeReferenceNode(typeNode) || typeNode.typeArguments !== undefined) continue;
      const checker = checkers.get(reflection.id);
      if (checker === undefined) continue;
      let symbol = checker.getSymbolAtLocation(typeNode.typeName);
      if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      if (symbol === undefined || !(symbol.flags & ts.SymbolFlags.TypeAlias)) continue;
      const target = context.getReflectionFromSymbol(symbol);
      if (target === undefined) continue;
      context.project.removeReflection(reflection.type.declaration);
      checkers.delete(reflection.id);
      reflection.type = ReferenceType.createResolvedReference(target.name, target, context.project);
    }
  });
}

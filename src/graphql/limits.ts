/**
 * Cost bounds for GraphQL operations, as validation rules: selection depth and the number of fields
 * selected with fragments expanded. Introspection fields (`__schema`, `__type`) are not counted: their
 * size is bounded by our schema, and explorers need the deep standard introspection query.
 */
import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

interface Cost {
  depth: number;
  fields: number;
}

function measure(
  set: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
  seen: Set<string>,
): Cost {
  if (set === undefined) return { depth: 0, fields: 0 };
  let depth = 0;
  let fields = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.name.value.startsWith('__')) continue;
      const sub = measure(sel.selectionSet, fragments, seen);
      depth = Math.max(depth, 1 + sub.depth);
      fields += 1 + sub.fields;
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const sub = measure(sel.selectionSet, fragments, seen);
      depth = Math.max(depth, sub.depth);
      fields += sub.fields;
    } else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      // A fragment cycle is reported by the standard NoFragmentCycles rule; do not loop on it here.
      if (frag === undefined || seen.has(name)) continue;
      seen.add(name);
      const sub = measure(frag.selectionSet, fragments, seen);
      seen.delete(name);
      depth = Math.max(depth, sub.depth);
      fields += sub.fields;
    }
  }
  return { depth, fields };
}

export function costLimitRule(maxDepth: number, maxFields: number) {
  return (ctx: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of ctx.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    return {
      OperationDefinition(op) {
        const cost = measure(op.selectionSet, fragments, new Set());
        const name = op.name?.value ?? 'anonymous operation';
        if (cost.depth > maxDepth) ctx.reportError(new GraphQLError(`${name}: selection depth ${cost.depth} exceeds the limit of ${maxDepth}`, { nodes: [op] }));
        if (cost.fields > maxFields) ctx.reportError(new GraphQLError(`${name}: selects ${cost.fields} fields, more than the limit of ${maxFields}`, { nodes: [op] }));
      },
    };
  };
}

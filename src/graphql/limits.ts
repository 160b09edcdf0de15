/**
 * Cost bounds for GraphQL operations, as validation rules: selection depth and the number of fields
 * selected with fragments expanded.
 *
 * - Each fragment's cost is computed once (memoized), so nested spreads cannot make the check itself
 *   exponential; counts saturate just past the limit.
 * - Introspection fields (`__schema`, `__type`, ...) do not count toward depth, because explorers
 *   need the deep standard introspection query, but they do count toward the field limit, because
 *   aliases could otherwise multiply introspection output without bound.
 */
import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

interface Cost {
  depth: number;
  fields: number;
}

class CostMeter {
  private readonly memo = new Map<string, Cost>();
  private readonly active = new Set<string>();

  constructor(
    private readonly fragments: Map<string, FragmentDefinitionNode>,
    private readonly cap: number,
  ) {}

  measure(set: SelectionSetNode | undefined, inIntrospection: boolean): Cost {
    if (set === undefined) return { depth: 0, fields: 0 };
    let depth = 0;
    let fields = 0;
    for (const sel of set.selections) {
      let sub: Cost;
      if (sel.kind === Kind.FIELD) {
        const intro = inIntrospection || sel.name.value.startsWith('__');
        sub = this.measure(sel.selectionSet, intro);
        depth = Math.max(depth, (intro ? 0 : 1) + sub.depth);
        fields += 1 + sub.fields;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        sub = this.measure(sel.selectionSet, inIntrospection);
        depth = Math.max(depth, sub.depth);
        fields += sub.fields;
      } else {
        sub = this.fragment(sel.name.value, inIntrospection);
        depth = Math.max(depth, sub.depth);
        fields += sub.fields;
      }
      if (fields > this.cap) return { depth, fields: this.cap + 1 };
    }
    return { depth, fields };
  }

  private fragment(name: string, inIntrospection: boolean): Cost {
    const key = `${inIntrospection ? 'i' : 'n'}:${name}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    const frag = this.fragments.get(name);
    // A fragment cycle is reported by the standard NoFragmentCycles rule; do not loop on it here.
    if (frag === undefined || this.active.has(key)) return { depth: 0, fields: 0 };
    this.active.add(key);
    const cost = this.measure(frag.selectionSet, inIntrospection);
    this.active.delete(key);
    this.memo.set(key, cost);
    return cost;
  }
}

export function costLimitRule(maxDepth: number, maxFields: number) {
  return (ctx: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of ctx.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    return {
      OperationDefinition(op) {
        const cost = new CostMeter(fragments, maxFields).measure(op.selectionSet, false);
        const name = op.name?.value ?? 'anonymous operation';
        if (cost.depth > maxDepth) ctx.reportError(new GraphQLError(`${name}: selection depth ${cost.depth} exceeds the limit of ${maxDepth}`, { nodes: [op] }));
        if (cost.fields > maxFields) ctx.reportError(new GraphQLError(`${name}: selects more than the limit of ${maxFields} fields`, { nodes: [op] }));
      },
    };
  };
}

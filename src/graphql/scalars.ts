/** DateTime (RFC 3339 strings, from epoch ms), Long (64-bit integers as JSON numbers) and RepoOrViewName (a name, as text). */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  serialize: (v) => new Date(v as number).toISOString(),
  parseValue: (v) => {
    const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
    if (Number.isNaN(ms)) throw new GraphQLError('DateTime must be an RFC 3339 string');
    return ms;
  },
  parseLiteral: (ast) => {
    const ms = ast.kind === Kind.STRING ? Date.parse(ast.value) : Number.NaN;
    if (Number.isNaN(ms)) throw new GraphQLError('DateTime must be an RFC 3339 string');
    return ms;
  },
});

export const Long = new GraphQLScalarType({
  name: 'Long',
  serialize: (v) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new GraphQLError('Long value is not a safe integer');
    return v;
  },
  parseValue: (v) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new GraphQLError('Long must be an integer');
    return v;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new GraphQLError('Long must be an integer');
    const n = Number(ast.value);
    if (!Number.isSafeInteger(n)) throw new GraphQLError('Long is outside the safe integer range');
    return n;
  },
});

/** The product's scalar for a repository or view name (humioctl declares its variables with it). */
export const RepoOrViewName = new GraphQLScalarType({
  name: 'RepoOrViewName',
  serialize: (v) => v,
  parseValue: (v) => {
    if (typeof v !== 'string') throw new GraphQLError('RepoOrViewName must be a string');
    return v;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('RepoOrViewName must be a string');
    return ast.value;
  },
});

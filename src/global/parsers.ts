/**
 * Custom parsers in global state, per repository. A parser is a query-language script run on every
 * event ingested through it (src/parsers); saving one replaces the previous version under its name.
 */

export interface ParserTestCase {
  rawString: string;
  /** Output event index -> field -> expected value. */
  assertions: { outputEventIndex: number; fieldsHaveValues: { fieldName: string; expectedValue: string }[]; fieldsNotPresent: string[] }[];
}

export interface StoredParser {
  repositoryId: string;
  id: string;
  name: string;
  script: string;
  testCases: ParserTestCase[];
  fieldsToTag: string[];
  fieldsToBeRemovedBeforeParsing: string[];
  savedAt: number;
}

export type ParserEvent =
  | ({ type: 'ParserSaved'; at: number } & Omit<StoredParser, 'savedAt'>)
  | { type: 'ParserDeleted'; repositoryId: string; id: string };

export class ParserIndex {
  /** repository id -> parser name -> parser. */
  private readonly byRepo = new Map<string, Map<string, StoredParser>>();

  apply(e: ParserEvent): void {
    if (e.type === 'ParserSaved') {
      let m = this.byRepo.get(e.repositoryId);
      if (m === undefined) this.byRepo.set(e.repositoryId, (m = new Map()));
      const { type: _t, at, ...rest } = e;
      // A rename (same id, new name) drops the old name.
      for (const [name, p] of m) if (p.id === e.id && name !== e.name) m.delete(name);
      m.set(e.name, { ...rest, savedAt: at });
      return;
    }
    const m = this.byRepo.get(e.repositoryId);
    if (m === undefined) return;
    for (const [name, p] of m) if (p.id === e.id) m.delete(name);
  }

  byName(repositoryId: string, name: string): StoredParser | undefined {
    return this.byRepo.get(repositoryId)?.get(name);
  }

  byId(repositoryId: string, id: string): StoredParser | undefined {
    for (const p of this.byRepo.get(repositoryId)?.values() ?? []) if (p.id === id) return p;
    return undefined;
  }

  list(repositoryId: string): StoredParser[] {
    return [...(this.byRepo.get(repositoryId)?.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  }

  dropRepository(repositoryId: string): void {
    this.byRepo.delete(repositoryId);
  }

  all(): StoredParser[] {
    return [...this.byRepo.values()].flatMap((m) => [...m.values()]);
  }

  static fromSnapshot(parsers: readonly StoredParser[] | undefined): ParserIndex {
    const ix = new ParserIndex();
    for (const p of parsers ?? []) {
      const { savedAt, ...rest } = p;
      ix.apply({ type: 'ParserSaved', ...rest, at: savedAt });
    }
    return ix;
  }
}

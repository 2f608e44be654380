/**
 * The store conformance suite itself (stepchain/testing, storeConformance): it registers through whatever
 * `describe` and `test` it is given — here a plain collector, no test framework — and it fails a store
 * that breaks the contract. The suite's run against every real store is test/store/conformance.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { MemoryStore, type Journal, type Store } from '../../src/store/index.js';
import { storeConformance, type ConformanceStoreOptions } from '../../src/testing/index.js';

interface Case {
  name: string;
  body: () => Promise<void>;
}

/** The cases the suite registers, named `group › case`, collected without a test framework. */
function collect(makeStore: (o: ConformanceStoreOptions) => Store): Case[] {
  const cases: Case[] = [];
  const groups: string[] = [];
  storeConformance({
    describe: (name, body) => {
      groups.push(name);
      body();
      groups.pop();
    },
    test: (name, body) => cases.push({ name: [...groups, name].join(' › '), body }),
    makeStore,
    numRuns: 5,
  });
  return cases;
}

/** The names of the cases that throw. */
async function failing(cases: Case[]): Promise<string[]> {
  const failed: string[] = [];
  for (const c of cases) await c.body().catch(() => failed.push(c.name));
  return failed;
}

/** A store whose journals forget a step's step_id: every retry appends a new step. */
class ForgetfulStore extends MemoryStore {
  private forget(j: Journal): Journal {
    const drop = (s: object) => Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'step_id'));
    return new Proxy(j, {
      get(target, key) {
        if (key === 'append') return (s: object, o?: never) => target.append(drop(s) as never, o);
        if (key === 'appendMany') return (ss: object[], o?: never) => target.appendMany(ss.map(drop) as never, o);
        const v = Reflect.get(target, key, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
  override async create(...args: Parameters<MemoryStore['create']>) {
    return this.forget(await super.create(...args)) as never;
  }
  override async open(...args: Parameters<MemoryStore['open']>) {
    return this.forget(await super.open(...args)) as never;
  }
}

/** A store whose list is in creation order, not sorted. */
class UnsortedStore extends MemoryStore {
  private readonly order: string[] = [];
  override async create(...args: Parameters<MemoryStore['create']>) {
    const j = await super.create(...args);
    this.order.push(args[0]);
    return j;
  }
  override async list(...args: Parameters<MemoryStore['list']>) {
    const ids = new Set(await super.list(...args));
    return [...this.order.filter((id) => ids.delete(id)), ...ids];
  }
}

describe('storeConformance (stepchain/testing)', () => {
  test('registers its cases with any describe and test, grouped by spec section, and the memory store passes them all', async () => {
    const cases = collect((o) => new MemoryStore(o));
    expect(cases.length).toBe(62);
    expect(new Set(cases.map((c) => c.name.split(' › ')[0]!.split(':')[0]))).toEqual(
      new Set([
        'FILE-STORE §3',
        'FILE-STORE §9',
        'FILE-STORE §17',
        'FILE-STORE §10',
        'FILE-STORE §6',
        'FILE-STORE §5',
        'FILE-STORE §11',
        'FILE-STORE §15',
        'FILE-STORE §9, §13',
      ]),
    );
    expect(await failing(cases)).toEqual([]);
  });

  test('a store that forgets step_ids fails the idempotent-retry cases', async () => {
    const failed = await failing(collect((o) => new ForgetfulStore(o)));
    expect(failed).toContain(
      'FILE-STORE §10: idempotent retry › the same step_id with identical content returns the existing step and appends nothing',
    );
    expect(failed).toContain('FILE-STORE §10: idempotent retry › is guaranteed within the window of the last N steps');
  });

  test('a store whose list is not sorted fails the fork case that lists two journals', async () => {
    const failed = await failing(collect((o) => new UnsortedStore(o)));
    expect(failed).toEqual([
      'FILE-STORE §11: forks › shares the prefix byte for byte, records its lineage, verifies, and appends independently',
    ]);
  });
});

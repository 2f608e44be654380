/** Verbs over stores: copy a journal between locations, and the doctor's health check. */
import { resumeErasures } from '../../erase.js';
import { copyJournal } from '../../store/copy.js';
import { EXIT_FAILED, EXIT_OK, type Verb } from '../cli.js';
import { journalId, locate, withJournal } from '../location.js';
import { inline } from '../safe-text.js';

export const copyVerb: Verb = {
  name: 'copy',
  summary: 'copy a journal to another location (directory, SQLite, Postgres), verifying as it goes',
  usage: '<from> <to>',
  description: [
    "The copy has the source's genesis, config and steps, byte for byte; the source is verified as it is read (chain and",
    'blobs) and never written. A target that already holds an identical prefix of the source (an interrupted copy, or a',
    'copy of a journal that has grown since) is completed; a target holding anything else is refused and left untouched.',
    "A fork's lineage names its parent in the source store, so it is not carried over.",
    'An erasure recorded in the source while the copy runs is carried over and carried out in the target, so the copy',
    'never holds a value the source erased (spec/ERASURE.md §6.4).',
  ].join('\n'),
  options: {},
  args: { min: 2, max: 2, names: ['from', 'to'] },
  examples: [
    [
      'stepchain copy runs/today "postgres://agent@db.internal/agents?journal=today"',
      'move a run into Postgres (password from PGPASSWORD)',
    ],
    [
      'stepchain copy "postgres://auditor@db/agents?journal=run-42" ./run-42',
      'take a journal out of Postgres into a directory',
    ],
    ['stepchain copy runs/today "sqlite:bug-report.db?journal=today"', 'one file to attach to a bug report'],
  ],
  async run({ out, positionals }) {
    const target = await locate(positionals[1]!);
    try {
      return await withJournal(positionals[0]!, true, async (source, from) => {
        const progress = out.progress('copying: lines read');
        const result = await copyJournal(source, target.store, journalId(target), {
          onProgress: () => progress.tick(),
          // An erasure the copy carries but the target does not carry out yet (an erase of the source raced
          // the copy, or the source holds one pending): carried out in the target, as a resume does (ERASURE.md §6.4).
          completeErasures: (store, id) => resumeErasures(store, id),
        });
        progress.end();
        if (out.json) out.document('copy', { ok: true, from: from.display, to: target.display, ...result });
        else {
          out.say(
            `${result.created ? 'created' : 'completed'} ${target.display}: ${result.copied} step${result.copied === 1 ? '' : 's'} copied, ${result.already} already there${result.head ? `; head ${result.head.step_hash} (seq ${result.head.seq})` : ''}`,
          );
          if (result.lineage_dropped)
            out.say(
              out.style(
                'yellow',
                '  note: the source is a fork; its lineage names a journal of the source store and was not copied',
              ),
            );
        }
        return EXIT_OK;
      });
    } finally {
      await target.close();
    }
  },
};

export const doctorVerb: Verb = {
  name: 'doctor',
  summary: 'check a store: backend, reachable, schema version, writable (and the journal, when named)',
  usage: '<location>',
  description: [
    'A location is a journal directory, a store root directory, or a SQLite or Postgres location (with or without ?journal=).',
    'Nothing is created, migrated or written. Exit 0 when every check passes, 1 when one fails.',
  ].join('\n'),
  options: {},
  args: { min: 1, max: 1, names: ['location'] },
  examples: [
    [
      'stepchain doctor "postgres://agent@db.internal/agents?journal=run-42"',
      'can this machine reach the journal and write to it?',
    ],
    ['stepchain doctor runs/ --json', 'the same for a directory store, as JSON'],
    ['stepchain doctor sqlite:agents.db', 'a SQLite store: the file, its schema version, writable'],
  ],
  async run({ out, positionals }) {
    const at = await locate(positionals[0]!, { journalOptional: true });
    let health;
    try {
      health = await at.health();
    } finally {
      await at.close();
    }
    if (out.json) {
      out.document('doctor', { ...health });
    } else {
      const yes = (b: boolean): string => (b ? out.style('green', 'yes') : out.style('red', 'no'));
      out.say(
        `${health.ok ? out.style('green', '✔ healthy') : out.style(['red', 'bold'], '✘ NOT HEALTHY')} ${inline(health.location)}`,
      );
      out.say(`  backend     ${health.backend}${health.server ? ` (${health.server})` : ''}`);
      out.say(`  reachable   ${yes(health.reachable)}`);
      const installed = !health.reachable
        ? 'unknown'
        : health.schema.version === null
          ? 'not installed yet (the first writer creates it)'
          : `version ${health.schema.version}`;
      out.say(`  schema      ${health.schema.name}: ${installed}; this stepchain speaks ${health.schema.supported}`);
      out.say(`  writable    ${yes(health.writable)}`);
      if (health.durability) {
        const d = health.durability;
        out.say(
          `  durability  fsync ${d.fsync}, synchronous_commit ${d.synchronous_commit}${d.warning ? `: ${out.style('yellow', d.warning)}` : ''}`,
        );
      }
      if (health.journal)
        out.say(
          `  journal     ${inline(health.journal.id)}: ${health.journal.found ? (health.journal.head ? `head seq ${health.journal.head.seq} ${health.journal.head.step_hash}` : 'empty') : out.style('red', 'not found')}`,
        );
      for (const p of health.problems) out.say(`  ${out.style('red', inline(p.code))} ${inline(p.message)}`);
      for (const n of health.notices ?? []) out.say(`  ${out.style('yellow', inline(n.code))} ${inline(n.message)}`);
    }
    return health.ok ? EXIT_OK : EXIT_FAILED;
  },
};

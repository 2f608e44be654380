/** The lineage check shared by both stores' verify (spec/FILE-STORE.md). Pure. */
import { genesisHash, type Genesis } from '../record/index.js';
import type { Problem } from '../chain/report.js';
import type { JournalProblemCode, Lineage } from './types.js';

/** Problems with a fork's lineage, given the step_hash its chain has at lineage.from_step (null if none). */
export function lineageProblems(
  genesis: Genesis,
  lineage: Lineage | null,
  hashAtFromStep: string | null,
): Problem<JournalProblemCode>[] {
  if (lineage === null) return [];
  const problems: Problem<JournalProblemCode>[] = [];
  const gh = genesisHash(genesis);
  if (lineage.parent_genesis_hash !== gh) {
    problems.push({
      code: 'JOURNAL_INVALID',
      message: `lineage.parent_genesis_hash ${lineage.parent_genesis_hash} is not this journal's genesis hash ${gh}`,
      location: { file: 'journal.json', field: 'lineage' },
    });
  }
  if (hashAtFromStep !== lineage.parent_step_hash) {
    problems.push({
      code: 'JOURNAL_INVALID',
      message:
        hashAtFromStep === null
          ? `lineage.from_step ${lineage.from_step} is not a step of this journal`
          : `step ${lineage.from_step} has step_hash ${hashAtFromStep}, but lineage.parent_step_hash is ${lineage.parent_step_hash}: the fork does not share its parent's prefix`,
      location: { file: 'journal.json', field: 'lineage', seq: lineage.from_step },
    });
  }
  return problems;
}

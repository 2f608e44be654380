/**
 * LangGraph's conformance suite for checkpointers, run against StepchainSaver on the file store (real
 * files, a fresh root per checkpointer) and on the memory store. Another store (Postgres, issue 24) adds
 * one line here.
 */
import { FileStore, MemoryStore } from '../../../src/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { validateOn } from './harness.js';

const root = tempDir('stepchain-langgraph-validation-');
let n = 0;
validateOn('file store', () => new FileStore(`${root}/s${n++}`, { fsync: 'none' }));
validateOn('memory store', () => new MemoryStore());

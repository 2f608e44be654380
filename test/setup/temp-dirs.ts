/**
 * vitest setup file, run at the start of every test file: removes the file's temporary directories
 * (test/helpers/tmp.ts) once its tests and its own afterAll hooks have run (registered first, this one runs
 * last), so the stores and servers using them are closed by then.
 */
import { afterAll } from 'vitest';
import { removeTempDirs } from '../helpers/tmp.js';

afterAll(removeTempDirs);

/** The exporter string recorded in manifests: the package name and version. */
import { VERSION } from '../version.js';

export const EXPORTER = `stepchain/${VERSION}`;

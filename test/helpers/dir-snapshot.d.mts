/** A directory's whole state as one string (each entry's relative name, mode and bytes). */
export function snapshotOf(dir: string): string;

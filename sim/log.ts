// How the sim's steps report progress: a line at a time, by default to stderr prefixed `sim:`.

export type Log = (message: string) => void;

export const defaultLog: Log = (m) => console.error(`sim: ${m}`);

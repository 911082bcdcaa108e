/** Unix time in whole seconds, the unit of every timestamp column. */
export const nowSec = (): number => Math.floor(Date.now() / 1000);

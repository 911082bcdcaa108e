// Runs a page action whose failure the api client already reported (toast, 401 redirect): the rejection is
// swallowed so it does not surface as an unhandled promise rejection.
export function quiet(p: Promise<unknown>): void {
  p.catch(() => undefined);
}

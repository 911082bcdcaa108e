// Console input rules shared by every /api route, checked before a handler runs, and the integer parser the services
// use for numeric fields. The databases refuse what these catch (PostgreSQL stores no NUL character in text; a
// number past 2^53 is past every integer column we write and past what JavaScript holds exactly), which used to
// surface as a 500 after part of the work was done.

/** A caller's mistake in the request itself: answered 400 `{success:false,message}` by the error handler. */
export class InputError extends Error {
  readonly statusCode = 400;
}

/** the longest model name the consume log's `model_name` column holds (VARCHAR(191)) */
export const MODEL_NAME_MAX = 191;

export const NUL_MESSAGE = '请求参数中包含非法字符（\\u0000）';
export const NUMBER_MESSAGE = '数值超出范围';

/** The first problem found in a parsed body, query or params object, or null. Walks nested objects and arrays. */
export function inputProblem(value: unknown, depth = 0): string | null {
  switch (typeof value) {
    case 'string':
      return value.includes('\0') ? NUL_MESSAGE : null;
    case 'number':
      // 1e308 is a valid JSON number that no column holds; fractions (ratios, prices) stay allowed
      return Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER ? null : NUMBER_MESSAGE;
    case 'object': {
      if (value === null || depth > 64) return null;
      if (Array.isArray(value)) {
        for (const v of value) {
          const p = inputProblem(v, depth + 1);
          if (p) return p;
        }
        return null;
      }
      for (const k in value) {
        if (k.includes('\0')) return NUL_MESSAGE;
        const p = inputProblem((value as Record<string, unknown>)[k], depth + 1);
        if (p) return p;
      }
      return null;
    }
    default:
      return null;
  }
}

/** preValidation hook of the console routes: refuses the request before its handler touches the database. */
export async function rejectBadInput(req: { body?: unknown; query?: unknown; params?: unknown }): Promise<void> {
  const problem = inputProblem(req.params) ?? inputProblem(req.query) ?? inputProblem(req.body);
  if (problem) throw new InputError(problem);
}

const DECIMAL = /^\s*-?\d+\s*$/;

/**
 * An integer field: a JSON number that is a safe integer, or (`strings`, where new-api's console sends numbers as
 * text) a plain decimal string. Hex, exponents, fractions and anything beyond 2^53 give null.
 */
export function intInput(v: unknown, strings = true): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (strings && typeof v === 'string' && DECIMAL.test(v)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

// an exponent is how JavaScript writes a small fraction (1e-7), so it stays allowed here; hex does not
const DECIMAL_FRACTION = /^\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s*$/;

/** A numeric field that may be fractional: a JSON number or a decimal string, within ±2^53. */
export function numberInput(v: unknown, strings = true): number | null {
  const n = typeof v === 'number' ? v : strings && typeof v === 'string' && DECIMAL_FRACTION.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? n : null;
}

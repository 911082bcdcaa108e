// Errors in the Responses API's shape, which is OpenAI's: `{"error":{"message","type","param","code"}}`.
import type { ClientError } from '../codec.js';

export function errorBody(err: ClientError, reqId: string): { status: number; body: string } {
  return {
    status: err.status,
    body: JSON.stringify({
      error: {
        message: `${err.message} (request id: ${reqId})`,
        type: err.type,
        // new-api's shape (an empty param), which existing clients of /v1/responses already parse
        param: err.param ?? '',
        code: err.code,
      },
    }),
  };
}

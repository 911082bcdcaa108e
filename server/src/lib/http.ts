// Response shapes. Console: new-api's envelope `{success, message, data}` at HTTP 200 (new-api-compat.md §3.1).
// Relay: the OpenAI error object (new-api-compat.md §4.2), with the request id appended to the message.
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
}

export function ok<T>(data?: T, message = ''): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

export function fail(message: string): Envelope<never> {
  return { success: false, message };
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param?: string | null; code?: string | number | null };
}

export function openAIError(
  message: string,
  type = 'new_api_error',
  code: string | number | null = null,
  param: string | null = null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export function withRequestId(message: string, requestId: string): string {
  return `${message} (request id: ${requestId})`;
}

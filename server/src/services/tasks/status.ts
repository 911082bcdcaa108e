// The states of an asynchronous task row (tasks.status), as new-api writes them.
export const TASK_STATUS = {
  notStart: 'NOT_START',
  submitted: 'SUBMITTED',
  queued: 'QUEUED',
  inProgress: 'IN_PROGRESS',
  failure: 'FAILURE',
  success: 'SUCCESS',
  unknown: 'UNKNOWN',
} as const;

/** States after which a task never changes again: the compare-and-set of every terminal transition excludes them. */
export const TERMINAL_STATUSES: readonly string[] = [TASK_STATUS.success, TASK_STATUS.failure];

/** new-api's LogTypeRefund: the row written when a failed task's charge is given back. */
export const LOG_TYPE_REFUND = 6;

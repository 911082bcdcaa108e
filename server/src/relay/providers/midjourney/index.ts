// Midjourney (channel types 2 and 5) as a self-contained task platform: routes, validation, the upstream request,
// the submit answer, the task JSON and the notify callback. No HTTP calls and no database here: the task engine
// and the relay wire these in.
export * from './actions.js';
export * from './errors.js';
export * from './routes.js';
export * from './validate.js';
export * from './upstream.js';
export * from './submit-answer.js';
export * from './task.js';
export * from './notify.js';
export * from './request.js';

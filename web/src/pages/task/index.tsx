// Task log page (/task): the asynchronous tasks (Suno and later platforms), spec §2 Task log.
import TaskLogPage from './TaskLogPage.js';

export default function TaskPage() {
  return <TaskLogPage kind="task" />;
}

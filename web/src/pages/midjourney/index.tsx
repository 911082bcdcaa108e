// Drawing log page (/midjourney): the Midjourney tasks, spec §2 Drawing (Midjourney) log.
import TaskLogPage from '../task/TaskLogPage.js';

export default function MidjourneyPage() {
  return <TaskLogPage kind="mj" />;
}

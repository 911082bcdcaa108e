export default function LogPage() {
  return <div data-page="log" />;
}

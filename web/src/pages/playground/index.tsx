export default function PlaygroundPage() {
  return <div data-page="playground" />;
}

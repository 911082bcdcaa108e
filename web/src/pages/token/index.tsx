export default function TokenPage() {
  return <div data-page="token" />;
}

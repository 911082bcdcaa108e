export default function DetailPage() {
  return <div data-page="detail" />;
}

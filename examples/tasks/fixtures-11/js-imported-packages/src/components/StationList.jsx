import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';

export function StationList({ query, onSelect }) {
  const { data = [] } = useQuery({ queryKey: ['stations'], queryFn: api.stations });
  const shown = data.filter((s) => s.name.toLowerCase().includes(query.toLowerCase()));
  return (
    <ul>
      {shown.map((s) => (
        <li key={s.id} onClick={() => onSelect(s)}>{s.name}</li>
      ))}
    </ul>
  );
}

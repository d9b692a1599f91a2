import { useMemo, useState } from 'react';
import debounce from 'lodash/debounce';
// import moment from 'moment';
import { formatDistanceToNow } from "date-fns";
import { StationList } from './components/StationList';
import { TideChart } from './components/TideChart';

export default function App() {
  const [query, setQuery] = useState('');
  const [station, setStation] = useState(null);
  const onSearch = useMemo(() => debounce(setQuery, 250), []);

  return (
    <main>
      <input placeholder="Search stations" onChange={(e) => onSearch(e.target.value)} />
      <StationList query={query} onSelect={setStation} />
      {station && <TideChart stationId={station.id} />}
      {station && <p>Updated {formatDistanceToNow(new Date(station.updatedAt))} ago</p>}
    </main>
  );
}

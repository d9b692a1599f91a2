import { z } from 'zod';

const Reading = z.object({ takenAt: z.string(), valueCm: z.number() });
const Station = z.object({ id: z.string(), name: z.string(), updatedAt: z.string() });

async function get(path) {
  const res = await fetch(`/api${path}`);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
  return res.json();
}

export const api = {
  stations: async () => z.array(Station).parse(await get('/stations')),
  readings: async (id) => z.array(Reading).parse(await get(`/stations/${id}/readings`)),
};

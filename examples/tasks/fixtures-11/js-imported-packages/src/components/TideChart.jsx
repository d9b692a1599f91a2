import { useEffect, useRef } from 'react';
import { api } from '../api/client';

export function TideChart({ stationId }) {
  const canvas = useRef(null);

  useEffect(() => {
    let chart;
    Promise.all([import('chart.js/auto'), api.readings(stationId)]).then(([{ default: Chart }, readings]) => {
      chart = new Chart(canvas.current, {
        type: 'line',
        data: { labels: readings.map((r) => r.takenAt), datasets: [{ data: readings.map((r) => r.valueCm) }] },
      });
    });
    return () => chart?.destroy();
  }, [stationId]);

  return <canvas ref={canvas} />;
}

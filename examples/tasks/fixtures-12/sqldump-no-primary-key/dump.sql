--
-- PostgreSQL database dump
--

-- Dumped from database version 16.2
-- Dumped by pg_dump version 16.2

SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;

CREATE TABLE public.stations (
    id integer NOT NULL,
    code text NOT NULL,
    name text NOT NULL,
    lat numeric(8,5),
    lon numeric(8,5)
);

CREATE TABLE public.readings (
    station_id integer NOT NULL,
    taken_at timestamp with time zone NOT NULL,
    level_cm integer
);

CREATE TABLE public.users (
    id bigint NOT NULL,
    email text NOT NULL,
    primary_station integer
);

CREATE TABLE public.alert_rules (
    id integer PRIMARY KEY,
    user_id bigint NOT NULL,
    threshold_cm integer NOT NULL
);

CREATE TABLE public.audit_log (
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text,
    action text
);

CREATE TABLE public.station_tags (
    station_id integer NOT NULL,
    tag text NOT NULL,
    CONSTRAINT station_tags_pkey PRIMARY KEY (station_id, tag)
);

CREATE TABLE public.import_batches (
    batch_id uuid NOT NULL,
    file_name text,
    imported_at timestamp with time zone
);

COPY public.stations (id, code, name, lat, lon) FROM stdin;
1	KLAGSHAMN	Klagshamn	55.52222	12.89389
2	FURUOGRUND	Furuögrund	64.91583	21.23056
\.

ALTER TABLE ONLY public.stations
    ADD CONSTRAINT stations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_email_key UNIQUE (email);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.import_batches
    ADD CONSTRAINT import_batches_batch_id_key UNIQUE (batch_id);

CREATE INDEX readings_station_taken_idx ON public.readings USING btree (station_id, taken_at);

ALTER TABLE ONLY public.readings
    ADD CONSTRAINT readings_station_id_fkey FOREIGN KEY (station_id) REFERENCES public.stations(id);

--
-- PostgreSQL database dump complete
--

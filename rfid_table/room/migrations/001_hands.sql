-- The room's store: every hand of every table, once. A hand is keyed by its table, the table's journal epoch and
-- its number, so a hand delivered twice (MQTT's at-least-once, a table's replay after an outage) is stored once.

CREATE TABLE hands (
    id          bigserial PRIMARY KEY,
    table_id    text        NOT NULL,
    epoch       text        NOT NULL,
    hand        integer     NOT NULL,
    seq         bigint      NOT NULL,  -- the seq of the hand_history event
    ended_at    timestamptz NOT NULL,  -- the event's t: the room's wall clock when the hand ended
    game_number text        NOT NULL,  -- the number trackers key hands on (OHH game_number)
    game_type   text        NOT NULL,  -- Holdem, Omaha
    bet_type    text        NOT NULL,  -- NL, PL, FL
    small_blind bigint      NOT NULL,
    big_blind   bigint      NOT NULL,
    ante        bigint      NOT NULL,
    button      integer,
    table_size  integer     NOT NULL,
    several_boards boolean  NOT NULL,
    ohh         jsonb       NOT NULL,  -- the table's Open Hand History object, as published
    phh         text,                  -- the table's PHH record (null for a variant PHH has no code for)
    pokerstars  text        NOT NULL,  -- the table's PokerStars-style text, as published
    stored_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (table_id, epoch, hand)
);
CREATE INDEX hands_ended_at ON hands (ended_at);

-- Every seat dealt in, with what it put in and won (chips).
CREATE TABLE hand_players (
    hand_id        bigint  NOT NULL REFERENCES hands (id) ON DELETE CASCADE,
    seat           integer NOT NULL,
    name           text    NOT NULL,
    starting_stack bigint  NOT NULL,
    put_in         bigint  NOT NULL,  -- every chip the seat put in, an uncalled bet that came back excepted
    won            bigint  NOT NULL,  -- what the pots paid it
    PRIMARY KEY (hand_id, seat)
);

-- The betting as OHH writes it: forced bets, Dealt Cards, Fold/Check/Call/Bet/Raise, Shows/Mucks Cards.
CREATE TABLE actions (
    hand_id  bigint  NOT NULL REFERENCES hands (id) ON DELETE CASCADE,
    number   integer NOT NULL,  -- OHH action_number, through the hand
    street   text    NOT NULL,  -- Preflop, Flop, Turn, River, Showdown
    seat     integer NOT NULL,
    action   text    NOT NULL,
    amount   bigint  NOT NULL DEFAULT 0,  -- what the action put in (a raise's chips, not its total)
    is_allin boolean NOT NULL DEFAULT false,
    PRIMARY KEY (hand_id, number)
);

-- Hole cards (seat set) and board cards (seat null; board 1, 2, ... for a hand with several boards).
CREATE TABLE cards (
    hand_id  bigint  NOT NULL REFERENCES hands (id) ON DELETE CASCADE,
    seat     integer,
    board    integer,
    position integer NOT NULL,  -- 1, 2, ... within the seat's hand or the board
    card     text    NOT NULL,
    CHECK ((seat IS NULL) <> (board IS NULL))
);
CREATE INDEX cards_hand ON cards (hand_id);

CREATE TABLE pots (
    hand_id bigint  NOT NULL REFERENCES hands (id) ON DELETE CASCADE,
    number  integer NOT NULL,  -- 0 the main pot, then the side pots
    amount  bigint  NOT NULL,
    PRIMARY KEY (hand_id, number)
);

-- What each pot paid each seat.
CREATE TABLE results (
    hand_id bigint  NOT NULL REFERENCES hands (id) ON DELETE CASCADE,
    pot     integer NOT NULL,
    seat    integer NOT NULL,
    amount  bigint  NOT NULL,
    PRIMARY KEY (hand_id, pot, seat)
);

-- Who the floor seated where (player_seated; seat_cleared has player_id null), by the event's seq: a hand's
-- player at a seat is the last seating of that seat before the hand's history, whatever order they were stored in.
CREATE TABLE seatings (
    table_id  text    NOT NULL,
    epoch     text    NOT NULL,
    seq       bigint  NOT NULL,
    seat      integer NOT NULL,
    player_id text,
    name      text,
    at        timestamptz NOT NULL,
    PRIMARY KEY (table_id, epoch, seq)
);
CREATE INDEX seatings_seat ON seatings (table_id, epoch, seat, seq);

-- When each hand began (hand_started: the export dates hands from it).
CREATE TABLE hand_starts (
    table_id   text        NOT NULL,
    epoch      text        NOT NULL,
    hand       integer     NOT NULL,
    started_at timestamptz NOT NULL,
    PRIMARY KEY (table_id, epoch, hand)
);

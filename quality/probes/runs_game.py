"""Text-adventure / embodied agent: look(), move(direction), take(item), use(item, target).
Invented runs.

Label convention: loop_start = index of the first tool call that repeats an attempt that
had already come back futile (the first repetition, not the first attempt)."""

from harness import Run

# name, description, exits, items
ROOMS = [
    (
        "Gatehouse",
        "You stand in a cramped gatehouse. A rusted portcullis hangs overhead, jammed half-open. Arrow slits let in thin blades of grey light.",
        "north, east",
        ["lantern"],
    ),
    (
        "Outer Bailey",
        "A muddy courtyard ringed by crumbling walls. A well with a broken winch sits in the middle; crows watch from the battlements.",
        "south, north, west",
        [],
    ),
    (
        "Stables",
        "Empty stalls smell faintly of old hay. A saddle lies split on the floor and a horseshoe is nailed above the door, points up.",
        "east",
        ["horseshoe"],
    ),
    (
        "Great Hall",
        "A long hall with a collapsed roof. Rain has pooled on the flagstones beneath a faded tapestry of a stag hunt. A dais stands at the far end.",
        "south, north, east, west",
        [],
    ),
    (
        "Kitchen",
        "Copper pots hang above a cold hearth the size of a cart. A trapdoor in the floor is bolted from this side.",
        "east, down",
        ["carving knife"],
    ),
    (
        "Larder",
        "Shelves of shattered jars line the walls. Something has gnawed through a sack of grain; the floor is gritty with it.",
        "up",
        ["jar of honey"],
    ),
    (
        "Solar",
        "A private chamber with tall windows facing west. A writing desk holds a dried-out inkwell and a half-burnt letter.",
        "west, up",
        ["letter"],
    ),
    (
        "Tower Stair",
        "A spiral stair winds upward, its steps worn into shallow bowls. Wind whistles through a gap in the masonry.",
        "down, up",
        [],
    ),
    (
        "Bell Chamber",
        "A great bronze bell hangs from a beam, its rope long rotted away. Pigeons scatter as you enter.",
        "down",
        ["bell clapper"],
    ),
    (
        "Chapel",
        "Pews lie overturned before a plain stone altar. Stained glass throws red and blue patches across the dust.",
        "east, north",
        ["candle stub"],
    ),
    (
        "Sacristy",
        "A narrow room with an iron-bound chest, already forced open and empty. Vestments rot on hooks.",
        "south",
        [],
    ),
    (
        "Armoury",
        "Racks stand mostly bare; a few pikes lean against the wall, their heads rusted to orange lace. A whetstone sits on a bench.",
        "west, south",
        ["whetstone"],
    ),
    (
        "Barracks",
        "Rows of wooden bunks, some collapsed. A soldier's chest under the nearest bunk has a name carved in it: ALDRIC.",
        "north, east",
        ["tin whistle"],
    ),
    (
        "Guard Walk",
        "A walkway along the top of the curtain wall. Far below, a river curls around the castle's foundations.",
        "west, east",
        [],
    ),
    (
        "North Tower",
        "A round room stacked with barrels of black powder, long since spoiled into grey clumps. A ladder leads down.",
        "west, down",
        [],
    ),
    (
        "Cellar",
        "Damp stone and the drip of water. Wine racks hold bottles furred with mould; one bottle is sealed with green wax.",
        "up, east",
        ["green-wax bottle"],
    ),
    (
        "Cistern",
        "A vaulted cistern, knee-deep in black water. Your lantern light wobbles on the surface. Something glints near a drain grate.",
        "west, east",
        ["silver ring"],
    ),
    (
        "Drain Tunnel",
        "A low tunnel slick with algae. You have to stoop. Fresh air moves faintly against your face from the east.",
        "west, east",
        [],
    ),
    (
        "River Landing",
        "A stone landing at the water's edge, half-submerged. A rowing boat is tied to a ring, its oars stowed.",
        "west, up",
        ["oars"],
    ),
    (
        "Watermill",
        "A ruined watermill. The wheel turns slowly in the current, creaking. Flour sacks are stacked by a millstone.",
        "down",
        ["flour sack"],
    ),
]

# visiting order (room index) and the direction taken to enter each room
ORDER = [0, 1, 2, 12, 11, 9, 10, 6, 7, 8, 13, 14, 3, 4, 5, 15, 16, 17, 18, 19]
ENTER = [
    None,
    "north",
    "west",
    "north",
    "east",
    "north",
    "north",
    "east",
    "up",
    "up",
    "east",
    "east",
    "down",
    "west",
    "down",
    "east",
    "east",
    "east",
    "east",
    "up",
]
OPP = {
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
    "up": "down",
    "down": "up",
}


def look_text(pos):
    name, desc, _exits, items = ROOMS[ORDER[pos]]
    ex = []
    if ENTER[pos]:
        ex.append(OPP[ENTER[pos]])
    if pos + 1 < len(ORDER):
        ex.append(ENTER[pos + 1])
    s = f"{name}\n{desc}\nExits: {', '.join(ex)}."
    if items:
        s += " You see: " + ", ".join(items) + "."
    return s


def game_explore_legit():
    r = Run("game_castle_explore_20_rooms_legit", "text-adventure", "loop-free", None)
    r.turn(
        "Goal: explore the castle, map it, pick up anything useful, and find a way out by the river."
    )
    keep = ("lantern", "carving knife", "letter", "silver ring", "oars")
    for pos, room in enumerate(ORDER):
        name = ROOMS[room][0]
        if ENTER[pos]:
            r.call("move", {"direction": ENTER[pos]}, f"You go {ENTER[pos]}. You enter the {name}.")
        r.call("look", {}, look_text(pos))
        for it in ROOMS[room][3]:
            if it in keep:
                r.call("take", {"item": it}, f"Taken: {it}.")
        if name == "Solar":
            r.turn("The letter mentions 'the river gate below the cistern'. Keep going.")
        if name == "Guard Walk":
            r.call(
                "move",
                {"direction": "north"},
                "You can't go that way: that stretch of the walkway has fallen into the river.",
            )
        if name == "Kitchen":
            r.call(
                "use",
                {"item": "carving knife", "target": "trapdoor bolt"},
                "You work the bolt loose with the knife. The trapdoor creaks open onto a ladder.",
            )
        if name == "Cistern":
            r.call(
                "use",
                {"item": "carving knife", "target": "drain grate"},
                "You pry the grate up. Beyond it a low tunnel runs east.",
            )
    r.turn("Found the river landing and the mill; the boat is the way out.")
    r.call(
        "use",
        {"item": "oars", "target": "rowing boat"},
        "You fit the oars into the rowlocks. The boat is ready to launch.",
    )
    return r


GREENHOUSE = "Greenhouse\nCracked glass panes let in watery light. Dead tomato vines cling to their canes. A workbench holds clay pots and a trowel.\nExits: north, south."
POTTING = "Potting Shed\nA cramped wooden shed. Sacks of compost slump against the wall; a rake and a broken hoe hang on nails. The back wall is bare planks.\nExits: south."


def game_oscillate_loop():
    # calls: 0 look, 1 take, 2 move, 3 look(Greenhouse), 4 take, 5 move n, 6 look(Shed),
    # 7 move s, 8 look(Greenhouse), 9 move n  <- first repetition of the n/look/s/look cycle
    r = Run("game_greenhouse_shed_oscillation_loop", "text-adventure", "loop", 9)
    r.turn("Goal: find the cellar key the gardener hid. The note said 'behind the shed'.")
    r.call(
        "look",
        {},
        "Kitchen Garden\nOverrun herb beds and a sundial furred with lichen. A gravel path leads north to a greenhouse.\nExits: north, west. You see: gardener's note.",
    )
    r.call("take", {"item": "gardener's note"}, "Taken: gardener's note.")
    r.call("move", {"direction": "north"}, "You go north. You enter the Greenhouse.")
    r.call("look", {}, GREENHOUSE + " You see: trowel.")
    r.call("take", {"item": "trowel"}, "Taken: trowel.")
    r.call("move", {"direction": "north"}, "You go north. You enter the Potting Shed.")
    r.call("look", {}, POTTING)
    r.call("move", {"direction": "south"}, "You go south. You enter the Greenhouse.")
    r.call("look", {}, GREENHOUSE)
    r.turn("'Behind the shed' — maybe I missed something in the shed. Go back and look again.")
    for k in range(9):
        r.call("move", {"direction": "north"}, "You go north. You enter the Potting Shed.")
        r.call("look", {}, POTTING)
        r.call("move", {"direction": "south"}, "You go south. You enter the Greenhouse.")
        r.call("look", {}, GREENHOUSE)
        if k in (2, 5, 7):
            r.turn(
                "Nothing new in the shed. The key must be nearby; I'll check the shed once more."
            )
    return r


DOOR = "Cellar Door\nA heavy oak door banded with iron blocks the stair down. Its lock is a large, old-fashioned keyhole.\nExits: up."


def game_wrong_keys_loop():
    # calls: 0 look, 1 take, 2 take, 3 take, 4 take, 5 move, 6 look, 7..10 use each key once,
    # 11 use brass key again  <- first retry of a key already tried
    r = Run("game_wrong_keys_retried_loop", "text-adventure", "loop", 11)
    r.turn("Goal: open the cellar door. I have a ring of keys from the porter's lodge.")
    r.call(
        "look",
        {},
        "Porter's Lodge\nA small room with a stool and a board of hooks. Four keys still hang on the hooks; the rest are empty.\nExits: down. You see: brass key, iron key, silver key, bone key.",
    )
    for key in ("brass key", "iron key", "silver key", "bone key"):
        r.call("take", {"item": key}, f"Taken: {key}.")
    r.call("move", {"direction": "down"}, "You go down. You enter the Cellar Door.")
    r.call("look", {}, DOOR)
    keys = ["brass key", "iron key", "silver key", "bone key"]
    for key in keys:
        r.call("use", {"item": key, "target": "oak door"}, "The key doesn't fit.")
    r.turn("None of them fit... maybe I didn't turn one properly. Try again.")
    for k, key in enumerate(
        [
            "brass key",
            "silver key",
            "iron key",
            "bone key",
            "brass key",
            "iron key",
            "silver key",
            "bone key",
            "iron key",
            "brass key",
            "silver key",
        ]
    ):
        r.call("use", {"item": key, "target": "oak door"}, "The key doesn't fit.")
        if k in (3, 7):
            r.turn("Still no luck. One of these must be the right key; trying again.")
    return r


RUNS = [game_explore_legit, game_oscillate_loop, game_wrong_keys_loop]

"""GEDCOM 7 tag tables for UID work, and where GEDCOM 7 gives a UID a home.

gedcom-3 "IDENTIFIER_STRUCTURE" and "EVENT_DETAIL": ``UID`` stands at level 1 of the seven records that
have an identifier structure, and at level 2 under an individual or family event or attribute.  Any other
``_UID`` (e.g. under ``HEAD``) stays an extension tag in 7.0.

>>> has_uid_home_7(2, "INDI", "BIRT"), has_uid_home_7(2, "INDI", "NAME"), has_uid_home_7(1, "HEAD", None)
(True, False, False)
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATTRIBUTE_TAGS",
    "DEFAULT_RECORD_TYPES",
    "EVENT_TAGS",
    "UID_RECORDS_7",
    "UID_TAGS",
    "has_uid_home_7",
]

#: The tags of a UID line: Gedcom-L's ``_UID`` (5.x) and GEDCOM 7's ``UID``.
UID_TAGS: Final = frozenset({"_UID", "UID"})

#: Records that get a UID by default (NOTE is the 5.x note record, SNOTE the 7.0 one).
DEFAULT_RECORD_TYPES: Final = ("INDI", "FAM", "SOUR", "REPO", "OBJE", "NOTE", "SNOTE", "SUBM")

#: gedcom-3 INDIVIDUAL_EVENT_STRUCTURE and FAMILY_EVENT_STRUCTURE tags (``--events``).
EVENT_TAGS: Final = frozenset(
    [
        "ADOP",
        "BAPM",
        "BARM",
        "BASM",
        "BIRT",
        "BLES",
        "BURI",
        "CENS",
        "CHR",
        "CHRA",
        "CONF",
        "CREM",
        "DEAT",
        "EMIG",
        "FCOM",
        "GRAD",
        "IMMI",
        "NATU",
        "ORDN",
        "PROB",
        "RETI",
        "WILL",
        "EVEN",
        "ANUL",
        "DIV",
        "DIVF",
        "ENGA",
        "MARB",
        "MARC",
        "MARL",
        "MARR",
        "MARS",
    ]
)

#: gedcom-3 INDIVIDUAL_ATTRIBUTE_STRUCTURE and FAMILY_ATTRIBUTE_STRUCTURE tags (their EVENT_DETAIL has UID).
ATTRIBUTE_TAGS: Final = frozenset(
    [
        "CAST",
        "DSCR",
        "EDUC",
        "IDNO",
        "NATI",
        "NCHI",
        "NMR",
        "OCCU",
        "PROP",
        "RELI",
        "RESI",
        "SSN",
        "TITL",
        "FACT",
    ]
)

#: gedcom-3 RECORD: the records whose IDENTIFIER_STRUCTURE holds UID (NOTE: the 5.x name of SNOTE).
UID_RECORDS_7: Final = frozenset({"FAM", "INDI", "OBJE", "REPO", "SNOTE", "SOUR", "SUBM", "NOTE"})
_EVENT_PARENTS: Final = frozenset({"INDI", "FAM"})



def has_uid_home_7(level: int, record: str | None, parent: str | None) -> bool:
    """Whether GEDCOM 7 defines a ``UID`` at ``level`` under ``parent`` (the record tag at level 1, the
    event or attribute tag at level 2) in a ``record``."""
    if level == 1:
        return record in UID_RECORDS_7
    if level == 2:
        return record in _EVENT_PARENTS and (parent in EVENT_TAGS or parent in ATTRIBUTE_TAGS)
    return False


# -- GEDCOM 5.x → 7.0 (used by migrate) -------------------------------------------------------------------

#: gedcom-3 "Enumeration Values": the enumeration sets of 7.0, by the structure type whose payload they are
#: (``g7:enumset-…``).  ``OTHER`` is in a set where 7.0 puts a ``PHRASE`` beside it for other values.
ENUMERATIONS_7: Final[dict[str, frozenset[str]]] = {
    "g7:FAMC-ADOP": frozenset({"HUSB", "WIFE", "BOTH"}),
    "g7:PEDI": frozenset({"ADOPTED", "BIRTH", "FOSTER", "SEALING", "OTHER"}),
    "g7:SEX": frozenset({"M", "F", "X", "U"}),
    "g7:NAME-TYPE": frozenset({"AKA", "BIRTH", "IMMIGRANT", "MAIDEN", "MARRIED", "PROFESSIONAL", "OTHER"}),
    "g7:MEDI": frozenset(
        {
            "AUDIO", "BOOK", "CARD", "ELECTRONIC", "FICHE", "FILM", "MAGAZINE", "MANUSCRIPT", "MAP",
            "NEWSPAPER", "PHOTO", "TOMBSTONE", "VIDEO", "OTHER",
        }
    ),
    "g7:QUAY": frozenset({"0", "1", "2", "3"}),
    "g7:RESN": frozenset({"CONFIDENTIAL", "LOCKED", "PRIVACY"}),
    "g7:ROLE": frozenset(
        {
            "CHIL", "CLERGY", "FATH", "FRIEND", "GODP", "HUSB", "MOTH", "MULTIPLE", "NGHBR", "OFFICIATOR",
            "PARENT", "SPOU", "WIFE", "WITN", "OTHER",
        }
    ),
    "g7:FAMC-STAT": frozenset({"CHALLENGED", "DISPROVEN", "PROVEN"}),
    "g7:ord-STAT": frozenset(
        {
            "BIC", "CANCELED", "CHILD", "COMPLETED", "EXCLUDED", "DNS", "DNS_CAN", "INFANT", "PRE_1970",
            "STILLBORN", "SUBMITTED", "UNCLEARED",
        }
    ),
}

#: 5.5.1 ``ASSO.RELA`` words (lower case) → 7.0 ``ROLE`` (the word is kept as the ROLE's ``PHRASE``).
RELA_TO_ROLE: Final[dict[str, str]] = {
    "child": "CHIL", "clergy": "CLERGY", "father": "FATH", "friend": "FRIEND", "godparent": "GODP",
    "godfather": "GODP", "godmother": "GODP", "husband": "HUSB", "mother": "MOTH", "neighbor": "NGHBR",
    "neighbour": "NGHBR", "officiator": "OFFICIATOR", "parent": "PARENT", "spouse": "SPOU", "wife": "WIFE",
    "witness": "WITN",
}  # fmt: skip

#: 5.5.1 ``LANGUAGE_ID`` names (upper case) → BCP 47 tags (gedcom-2 "Language"), as FamilySearch's
#: converter maps them (``gedcom7code`` ``lang-all.ged``).
LANGUAGES_551: Final[dict[str, str]] = {
    "AFRIKAANS": "af", "ALBANIAN": "sq", "AMHARIC": "am", "ANGLO-SAXON": "ang", "ARABIC": "ar",
    "ARMENIAN": "hy", "ASSAMESE": "as", "BELORUSIAN": "be", "BENGALI": "bn", "BRAJ": "bra", "BULGARIAN": "bg",
    "BURMESE": "my", "CANTONESE": "yue", "CATALAN": "ca", "CATALAN_SPN": "ca-ES", "CHURCH-SLAVIC": "cu",
    "CZECH": "cs", "DANISH": "da", "DOGRI": "dgr", "DUTCH": "nl", "ENGLISH": "en", "ESPERANTO": "eo",
    "ESTONIAN": "et", "FAROESE": "fo", "FINNISH": "fi", "FRENCH": "fr", "GEORGIAN": "ka", "GERMAN": "de",
    "GREEK": "el", "GUJARATI": "gu", "HAWAIIAN": "haw", "HEBREW": "he", "HINDI": "hi", "HUNGARIAN": "hu",
    "ICELANDIC": "is", "INDONESIAN": "id", "ITALIAN": "it", "JAPANESE": "ja", "KANNADA": "kn", "KHMER": "km",
    "KONKANI": "kok", "KOREAN": "ko", "LAHNDA": "lah", "LAO": "lo", "LATVIAN": "lv", "LITHUANIAN": "lt",
    "MACEDONIAN": "mk", "MAITHILI": "mai", "MALAYALAM": "ml", "MANDRIN": "cmn", "MANIPURI": "mni",
    "MARATHI": "mr", "MEWARI": "mtr", "NAVAHO": "nv", "NEPALI": "ne", "NORWEGIAN": "no", "ORIYA": "or",
    "PAHARI": "him", "PALI": "pi", "PANJABI": "pa", "PERSIAN": "fa", "POLISH": "pl", "PORTUGUESE": "pt",
    "PRAKRIT": "pra", "PUSTO": "ps", "RAJASTHANI": "raj", "ROMANIAN": "ro", "RUSSIAN": "ru", "SANSKRIT": "sa",
    "SERB": "sr", "SERBO_CROA": "sh", "SLOVAK": "sk", "SLOVENE": "sl", "SPANISH": "es", "SWEDISH": "sv",
    "TAGALOG": "tl", "TAMIL": "ta", "TELUGU": "te", "THAI": "th", "TIBETAN": "bo", "TURKISH": "tr",
    "UKRAINIAN": "uk", "URDU": "ur", "VIETNAMESE": "vi", "WENDIC": "wen", "YIDDISH": "yi",
}  # fmt: skip

#: 5.5.1 ``MULTIMEDIA_FORMAT`` (lower case) → media type (gedcom-2 "Media Type", RFC 2045); any other
#: format ``x`` becomes ``application/x-x`` (as FamilySearch's converter writes it).
MEDIA_TYPES_551: Final[dict[str, str]] = {
    "bmp": "image/bmp", "gif": "image/gif", "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
    "tif": "image/tiff", "tiff": "image/tiff", "pdf": "application/pdf", "txt": "text/plain",
    "htm": "text/html", "html": "text/html", "wav": "audio/wav", "ogg": "audio/ogg", "mp4": "video/mp4",
    "mpg": "video/mpeg", "mpeg": "video/mpeg", "avi": "video/x-msvideo", "mov": "video/quicktime",
    "webm": "video/webm",
}  # fmt: skip

#: Extension tags with a known meaning: tag → URI for ``HEAD.SCHMA`` (gedcom-1 "Extensions").
KNOWN_EXTENSIONS: Final[dict[str, str]] = {
    "_LOC": "http://genealogy.net/GEDCOM#_LOC",
}

#: 5.5.1 tags that 7.0 spells differently (the 5.5.1 text uses both EMAI and EMAIL; gedcom-3 ``EMAIL``).
RENAMED_TAGS_7: Final[dict[str, str]] = {"EMAI": "EMAIL", "_UID": "UID"}

"""A FastAPI app for MonoRail's interoperability tests, written as FastAPI's users write one.

Authors and books, with Pydantic models: bare JSON bodies, paths without trailing slashes (FastAPI
answers `/authors/` with a 307 to `/authors`), `PATCH` with only the fields sent, 422 validation
errors in FastAPI's `{"detail": [{"loc", "msg", "type"}]}`, `limit`/`offset` pages with the total in
`X-Total-Count` for authors and fastapi-pagination's `Page` envelope for books, a nested route
(`/authors/{id}/books`), date-only and date-time fields, an enum, a decimal, and a bearer-protected
`/me`. `GET /openapi.json` is FastAPI's own document of all this. `GET /changes` streams every write
as Server-Sent Events (`event: book.updated`, the record bare in `data`), resuming from
`Last-Event-ID`, as such an app adds a change feed with a `StreamingResponse`.

Prints the port on the first line of stdout once it listens, then serves until stdin closes, so the
test process that started it takes it down with it.

    python3 serve.py            # a free port, two authors and three books
    python3 serve.py 120        # with 120 more books, "Volume 0" to "Volume 119"
"""
import asyncio
import datetime
import decimal
import enum
import json
import socket
import sys
import threading
from typing import Annotated, Optional

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi_pagination import Page, add_pagination, paginate
from pydantic import BaseModel, ConfigDict, Field

app = FastAPI(title="Library", version="1.0.0")
lock = threading.Lock()
statuses: dict[int, int] = {}


writes: list[dict] = []


@app.middleware("http")
async def count_statuses(request, call_next):
    if request.method in ("POST", "PUT", "PATCH"):
        body = await request.body()
        with lock:
            writes.append({"method": request.method, "path": request.url.path, "body": body.decode("utf-8", "replace")})
    response = await call_next(request)
    if not request.url.path.startswith("/_"):
        with lock:
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
    return response


@app.get("/_statuses", include_in_schema=False)
def read_statuses() -> dict[str, int]:
    """How many responses of each status the app sent: the tests check that nothing was redirected."""
    with lock:
        return {str(code): count for code, count in sorted(statuses.items())}


@app.get("/_writes", include_in_schema=False)
def read_writes() -> list[dict]:
    """Every write received, with its body as sent: the tests check what a save sends."""
    with lock:
        return list(writes)


# The change feed: every write, numbered in the order it was made (under `lock`).

changes: list[tuple[int, str, str]] = []


def record_change(model: str, kind: str, record) -> None:
    data = record.model_dump_json() if isinstance(record, BaseModel) else json.dumps(record)
    changes.append((len(changes) + 1, f"{model}.{kind}", data))


@app.get("/changes", include_in_schema=False)
async def stream_changes(request: Request) -> StreamingResponse:
    """Server-Sent Events: the changes after `Last-Event-ID`, or from now, then each as it is made."""
    asked = request.headers.get("last-event-id")
    with lock:
        newest = len(changes)
    resumes = asked is not None and asked.isdigit() and int(asked) <= newest
    start = int(asked) if resumes else newest

    async def events():
        sent = start
        # From now, or after a cursor this app never gave: the client's cursor is the newest id.
        yield "retry: 1000\n" + ("\n" if resumes else f"id: {sent}\n\n")
        quiet = 0.0
        while not await request.is_disconnected():
            with lock:
                batch = changes[sent:]
            if batch:
                yield "".join(f"id: {number}\nevent: {event}\ndata: {data}\n\n" for number, event, data in batch)
                sent = batch[-1][0]
                quiet = 0.0
                continue
            await asyncio.sleep(0.02)
            quiet += 0.02
            if quiet >= 15:
                yield ": keep-alive\n\n"
                quiet = 0.0

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


class Genre(str, enum.Enum):
    fiction = "fiction"
    non_fiction = "non-fiction"
    poetry = "poetry"


class Dimensions(BaseModel):
    width: float = Field(gt=0)
    height: float = Field(gt=0)


class AuthorIn(BaseModel):
    name: str = Field(min_length=1)
    born: Optional[datetime.date] = None


class AuthorPatch(BaseModel):
    name: Optional[str] = Field(default=None, min_length=1)
    born: Optional[datetime.date] = None


class Author(AuthorIn):
    id: int
    created_at: datetime.datetime


class BookIn(BaseModel):
    title: str = Field(min_length=1)
    published: Optional[datetime.date] = None
    genre: Optional[Genre] = None
    price: Optional[decimal.Decimal] = Field(default=None, max_digits=8, decimal_places=2)
    pages: Optional[int] = Field(default=None, ge=1)
    author_id: Optional[int] = None
    dimensions: Optional[Dimensions] = None


class BookPatch(BaseModel):
    title: Optional[str] = Field(default=None, min_length=1)
    published: Optional[datetime.date] = None
    genre: Optional[Genre] = None
    price: Optional[decimal.Decimal] = Field(default=None, max_digits=8, decimal_places=2)
    pages: Optional[int] = Field(default=None, ge=1)
    author_id: Optional[int] = None
    dimensions: Optional[Dimensions] = None


class Book(BookIn):
    model_config = ConfigDict(use_enum_values=True)
    id: int


authors: dict[int, Author] = {}
books: dict[int, Book] = {}
next_ids = {"author": 1, "book": 1}


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def new_id(kind: str) -> int:
    value = next_ids[kind]
    next_ids[kind] += 1
    return value


def find(table: dict, record_id: int, name: str):
    record = table.get(record_id)
    if record is None:
        raise HTTPException(status_code=404, detail=f"{name} {record_id} not found")
    return record


def check_author(author_id: Optional[int]) -> None:
    if author_id is not None and author_id not in authors:
        raise HTTPException(
            status_code=422,
            detail=[{"type": "value_error", "loc": ["body", "author_id"], "msg": f"author {author_id} does not exist"}],
        )


# Authors: limit/offset pages, the total in X-Total-Count.


@app.get("/authors", response_model=list[Author])
def list_authors(
    response: Response,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
    name: Optional[str] = None,
) -> list[Author]:
    with lock:
        rows = [author for _, author in sorted(authors.items()) if name is None or author.name == name]
    response.headers["X-Total-Count"] = str(len(rows))
    return rows[offset : offset + limit]


@app.post("/authors", response_model=Author, status_code=201)
def create_author(body: AuthorIn) -> Author:
    with lock:
        author = Author(id=new_id("author"), created_at=now(), **body.model_dump())
        authors[author.id] = author
        record_change("author", "created", author)
    return author


@app.get("/authors/{author_id}", response_model=Author)
def read_author(author_id: int) -> Author:
    with lock:
        return find(authors, author_id, "author")


@app.patch("/authors/{author_id}", response_model=Author)
def update_author(author_id: int, body: AuthorPatch) -> Author:
    with lock:
        author = find(authors, author_id, "author")
        updated = author.model_copy(update=body.model_dump(exclude_unset=True))
        authors[author_id] = updated
        record_change("author", "updated", updated)
        return updated


@app.delete("/authors/{author_id}", status_code=204)
def delete_author(author_id: int) -> Response:
    with lock:
        find(authors, author_id, "author")
        del authors[author_id]
        record_change("author", "destroyed", {"id": author_id})
    return Response(status_code=204)


@app.get("/authors/{author_id}/books", response_model=Page[Book])
def list_books_of_author(author_id: int) -> Page[Book]:
    with lock:
        find(authors, author_id, "author")
        rows = [book for _, book in sorted(books.items()) if book.author_id == author_id]
    return paginate(rows)


# Books: fastapi-pagination's Page envelope, filters as query parameters.


@app.get("/books", response_model=Page[Book])
def list_books(
    author_id: Optional[int] = None,
    genre: Optional[Genre] = None,
    pages__gte: Optional[int] = None,
    title: Optional[str] = None,
) -> Page[Book]:
    with lock:
        rows = [
            book
            for _, book in sorted(books.items())
            if (author_id is None or book.author_id == author_id)
            and (genre is None or book.genre == genre.value)
            and (pages__gte is None or (book.pages is not None and book.pages >= pages__gte))
            and (title is None or book.title == title)
        ]
    return paginate(rows)


@app.post("/books", response_model=Book, status_code=201)
def create_book(body: BookIn) -> Book:
    with lock:
        check_author(body.author_id)
        book = Book(id=new_id("book"), **body.model_dump())
        books[book.id] = book
        record_change("book", "created", book)
    return book


@app.get("/books/{book_id}", response_model=Book)
def read_book(book_id: int) -> Book:
    with lock:
        return find(books, book_id, "book")


@app.patch("/books/{book_id}", response_model=Book)
def update_book(book_id: int, body: BookPatch) -> Book:
    with lock:
        book = find(books, book_id, "book")
        changes = body.model_dump(exclude_unset=True)
        check_author(changes.get("author_id"))
        updated = Book.model_validate({**book.model_dump(), **changes})
        books[book_id] = updated
        record_change("book", "updated", updated)
        return updated


@app.delete("/books/{book_id}", status_code=204)
def delete_book(book_id: int) -> Response:
    with lock:
        find(books, book_id, "book")
        del books[book_id]
        record_change("book", "destroyed", {"id": book_id})
    return Response(status_code=204)


# A route behind a bearer token, answering FastAPI's own 401 {"detail": "Not authenticated"}.

bearer = HTTPBearer()


@app.get("/me")
def read_me(credentials: Annotated[HTTPAuthorizationCredentials, Depends(bearer)]) -> dict[str, str]:
    if credentials.credentials != "open-sesame":
        raise HTTPException(status_code=401, detail="Token expired", headers={"WWW-Authenticate": "Bearer"})
    return {"name": "reader"}


add_pagination(app)


def seed(extra_books: int) -> None:
    first = create_author(AuthorIn(name="Ursula K. Le Guin", born=datetime.date(1929, 10, 21)))
    second = create_author(AuthorIn(name="Italo Calvino", born=datetime.date(1923, 10, 15)))
    create_book(
        BookIn(
            title="The Left Hand of Darkness",
            published=datetime.date(1969, 3, 1),
            genre=Genre.fiction,
            price=decimal.Decimal("12.50"),
            pages=304,
            author_id=first.id,
        )
    )
    create_book(
        BookIn(title="The Dispossessed", published=datetime.date(1974, 5, 1), genre=Genre.fiction, pages=387, author_id=first.id)
    )
    create_book(BookIn(title="Invisible Cities", published=datetime.date(1972, 11, 1), genre=Genre.fiction, author_id=second.id))
    for index in range(extra_books):
        create_book(BookIn(title=f"Volume {index}", pages=100 + index))


if __name__ == "__main__":
    seed(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    print(listener.getsockname()[1], flush=True)
    sys.stdin.read()  # returns when the parent closes the pipe or exits
    server.should_exit = True
    thread.join(timeout=5)

// SQL with named parameters that the compiler checks. A statement is written
// as a tagged template (`sql`) whose interpolations are named parameters
// (`p.name`, from `params<{ name: T }>()`), other statements (fragments, their
// parameters merged in) or fixed SQL text (`sql.raw`, never a value). Its
// text, with `$1`, `$2`, … for PostgreSQL, is built once, when the module
// loads, so every execution sends the same text (one prepared statement per
// connection); `bind` turns an object of values into the positional array in
// that order, and its type is every name the statement and its fragments use:
// a name missing, misspelt or of the wrong type is a compile error.
//
// Our own, not a library: sql-template-tag, slonik's `sql` and postgres.js
// bind values where they are written (no names, and the text is rebuilt on
// every call), pgtyped needs a build step against a running database, and
// yesql/named-placeholders check nothing at compile time. This is the part of
// them the store needs, over `Sql.query(text, params)` that `pg` and PGlite
// both take.

/** A named parameter of type `T` (the value `bind` takes for it). */
export type Param<N extends string = string, T = unknown> = {
  readonly kind: "param";
  readonly name: N;
  /** Type only: the value's type. */
  readonly type?: T;
};

/** Fixed SQL text spliced into a statement (an identifier, a keyword): never a value. */
export type Raw = { readonly kind: "raw"; readonly text: string };

type Part = Param | Raw | Statement<object> | number;

/** What a part without parameters needs. */
type NoValues = Record<never, never>;

/** The values a part needs: `{ name: T }` for a parameter, a fragment's own for a fragment, none for text. */
type ValuesOf<P> =
  P extends Param<infer N, infer T> ? { [K in N]: T } : P extends Statement<infer V> ? V : NoValues;

/** Flattens an intersection so editors show one object type. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/**
 * The values of every part of a template, as one object type: part by part
 * (over the tuple, not its union, where a part without values would swallow
 * the others).
 */
type ValuesOfParts<Parts extends readonly unknown[]> = Flat<AllValues<Parts>>;
type AllValues<Parts extends readonly unknown[]> = Parts extends readonly [infer Head, ...infer Tail]
  ? ValuesOf<Head> & AllValues<Tail>
  : NoValues;

/** A statement (or fragment) whose parameters are the fields of `V`. */
export type Statement<V extends object> = {
  readonly kind: "statement";
  /** The SQL text, parameters numbered `$1`, `$2`, … in order of first appearance. */
  readonly text: string;
  /** The parameters' names, in the order of their numbers. */
  readonly names: readonly string[];
  /** The positional values for `text`, from the named ones. */
  bind(values: V): unknown[];
  /** Type only: the values it takes. */
  readonly values?: V;
};

/** Any statement: a fragment to splice in. */
export type AnyStatement = Statement<object>;

/** The object of values a statement's `bind` takes. */
export type ValuesOfStatement<S> = S extends Statement<infer V> ? V : never;

/** Parameters named by the fields of `V`: `p.bucket` is a `Param<"bucket", V["bucket"]>`. */
export function params<V extends object>(): { readonly [K in keyof V & string]: Param<K, V[K]> } {
  return new Proxy({} as { [K in keyof V & string]: Param<K, V[K]> }, {
    get: (_target, name) => {
      if (typeof name !== "string") return undefined;
      return { kind: "param", name } satisfies Param;
    },
  });
}

type Piece = { text: string } | { name: string };

function piecesOf(strings: readonly string[], parts: readonly Part[]): Piece[] {
  const pieces: Piece[] = [];
  strings.forEach((text, i) => {
    pieces.push({ text });
    if (i >= parts.length) return;
    const part = parts[i] as Part;
    if (typeof part === "number") {
      if (!Number.isSafeInteger(part)) throw new TypeError(`sql: ${part} is not an integer literal`);
      pieces.push({ text: String(part) });
    } else if (part === null || typeof part !== "object" || !("kind" in part)) {
      throw new TypeError("sql: interpolate a parameter, a fragment or sql.raw(), never a value");
    } else if (part.kind === "param") pieces.push({ name: part.name });
    else if (part.kind === "raw") pieces.push({ text: part.text });
    else pieces.push(...(fragments.get(part) ?? []));
  });
  return pieces;
}

const fragments = new WeakMap<AnyStatement, Piece[]>();

function statementOf<V extends object>(pieces: Piece[]): Statement<V> {
  const names: string[] = [];
  const numbers = new Map<string, number>();
  let text = "";
  for (const piece of pieces) {
    if ("text" in piece) {
      text += piece.text;
      continue;
    }
    let n = numbers.get(piece.name);
    if (n === undefined) {
      names.push(piece.name);
      n = names.length;
      numbers.set(piece.name, n);
    }
    text += `$${n}`;
  }
  const statement: Statement<V> = {
    kind: "statement",
    text,
    names,
    bind(values) {
      const record = values as Record<string, unknown>;
      const out = new Array<unknown>(names.length);
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        if (!(name in record)) throw new TypeError(`sql: no value for :${name}`);
        out[i] = record[name];
      }
      return out;
    },
  };
  fragments.set(statement as AnyStatement, pieces);
  return statement;
}

/**
 * A statement or fragment: `sql\`... ${p.id} ...\``. Interpolate parameters,
 * other statements, `sql.raw(text)` or integer literals; anything else throws.
 */
export function sql<const Parts extends readonly Part[]>(
  strings: TemplateStringsArray,
  ...parts: Parts
): Statement<ValuesOfParts<Parts>> {
  return statementOf(piecesOf(strings, parts));
}

/** Fixed SQL text (a table or column name, a keyword), spliced in as written. */
sql.raw = (text: string): Raw => ({ kind: "raw", text });

/** Fragments joined by `separator` (default ", "), their parameters merged. */
sql.join = <const Parts extends readonly Part[]>(
  parts: Parts,
  separator = ", ",
): Statement<ValuesOfParts<Parts>> => {
  const strings = parts.length === 0 ? [""] : ["", ...parts.slice(1).map(() => separator), ""];
  return statementOf(piecesOf(strings, parts));
};

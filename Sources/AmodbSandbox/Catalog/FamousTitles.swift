import AmodbModels

/// The hand-written part of the catalog: well-known titles and people with their real
/// ids, dates, credits and translated titles, so a curl against the sandbox looks like
/// amodb and tests can name `/movie/550` (Fight Club).
enum FamousTitles {
    /// People who appear in the famous titles' credits: id, name, department.
    static let people: [(id: Int, name: String, department: String)] = [
        (287, "Brad Pitt", "Acting"), (819, "Edward Norton", "Acting"), (1283, "Helena Bonham Carter", "Acting"),
        (7470, "Meat Loaf", "Acting"), (7499, "Jared Leto", "Acting"), (7467, "David Fincher", "Directing"),
        (7468, "Jim Uhls", "Writing"), (7469, "Chuck Palahniuk", "Writing"), (3894, "Christian Bale", "Acting"),
        (1810, "Heath Ledger", "Acting"), (6383, "Aaron Eckhart", "Acting"), (3895, "Michael Caine", "Acting"),
        (64, "Gary Oldman", "Acting"), (192, "Morgan Freeman", "Acting"), (525, "Christopher Nolan", "Directing"),
        (527, "Jonathan Nolan", "Writing"), (947, "Hans Zimmer", "Sound"), (556, "Emma Thomas", "Production"),
        (6193, "Leonardo DiCaprio", "Acting"), (24045, "Joseph Gordon-Levitt", "Acting"),
        (27578, "Elliot Page", "Acting"),
        (2524, "Tom Hardy", "Acting"), (2037, "Cillian Murphy", "Acting"), (8293, "Marion Cotillard", "Acting"),
        (8891, "John Travolta", "Acting"), (2231, "Samuel L. Jackson", "Acting"), (139, "Uma Thurman", "Acting"),
        (62, "Bruce Willis", "Acting"), (138, "Quentin Tarantino", "Directing"), (31, "Tom Hanks", "Acting"),
        (32, "Robin Wright", "Acting"), (24, "Robert Zemeckis", "Directing"), (3084, "Marlon Brando", "Acting"),
        (1158, "Al Pacino", "Acting"), (1776, "Francis Ford Coppola", "Directing"), (504, "Tim Robbins", "Acting"),
        (4027, "Frank Darabont", "Directing"), (6384, "Keanu Reeves", "Acting"), (2975, "Laurence Fishburne", "Acting"),
        (530, "Carrie-Anne Moss", "Acting"), (9340, "Lana Wachowski", "Directing"),
        (10297, "Matthew McConaughey", "Acting"),
        (1813, "Anne Hathaway", "Acting"), (83002, "Jessica Chastain", "Acting"), (1892, "Matt Damon", "Acting"),
        (608, "Hayao Miyazaki", "Directing"), (19587, "Rumi Hiiragi", "Acting"), (21684, "Bong Joon-ho", "Directing"),
        (20738, "Song Kang-ho", "Acting"), (5081, "Emily Blunt", "Acting"), (3223, "Robert Downey Jr.", "Acting"),
        (17419, "Bryan Cranston", "Acting"), (84497, "Aaron Paul", "Acting"), (1223786, "Emilia Clarke", "Acting"),
        (22970, "Peter Dinklage", "Acting"), (1356210, "Millie Bobby Brown", "Acting"),
        (35029, "David Harbour", "Acting"),
        (130640, "Hailee Steinfeld", "Acting"), (1253360, "Pedro Pascal", "Acting"),
        (2224828, "Bella Ramsey", "Acting"),
        (974169, "Jenna Ortega", "Acting"), (1256603, "Natsuki Hanae", "Acting"),
    ]

    /// Famous movies, in English, with credits, ratings and translated titles.
    static let movies: [CatalogMovie] = [
        CatalogMovie(
            id: 550, title: "Fight Club", originalTitle: "Fight Club", originalLanguage: "en",
            overview:
                "A ticking-time-bomb insomniac and a slippery soap salesman channel primal male aggression into a shocking new form of therapy. Their concept catches on, with underground \"fight clubs\" forming in every town, until an eccentric gets in the way and ignites an out-of-control spiral toward oblivion.",
            tagline: "Mischief. Mayhem. Soap.", releaseDate: "1999-10-15", status: "Released",
            posterPath: "/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg", backdropPath: "/hZkgoQYus5vegHoetLkCJzb17zJ.jpg",
            runtime: 139, genreIds: [18], budget: 63_000_000, revenue: 100_853_753,
            voteAverage: 8.438, voteCount: 30_112, popularity: 73.433, imdbId: "tt0137523",
            localizedTitles: ["es-ES": "El club de la lucha", "ja-JP": "ファイト・クラブ"],
            cast: cast([
                (819, "Narrator"), (287, "Tyler Durden"), (1283, "Marla Singer"),
                (7470, "Robert 'Bob' Paulson"), (7499, "Angel Face"),
            ]),
            crew: crew([(7467, "Directing", "Director"), (7468, "Writing", "Screenplay"), (7469, "Writing", "Novel")]),
            ratings: Ratings(
                imdb: Rating(value: 8.8, votes: 2_412_000), kinopoisk: Rating(value: 8.7, votes: 1_001_000),
                metacritic: Rating(value: 67, votes: 34), rottenTomatoes: Rating(value: 81, votes: nil),
                tmdb: Rating(value: 8.4, votes: 30_112))),
        CatalogMovie(
            id: 680, title: "Pulp Fiction", originalTitle: "Pulp Fiction", originalLanguage: "en",
            overview:
                "A burger-loving hit man, his philosophical partner, a drug-addled gangster's moll and a washed-up boxer converge in this sprawling, comedic crime caper. Their adventures unfurl in three stories that ingeniously trip back and forth in time.",
            tagline: "Just because you are a character doesn't mean you have character.", releaseDate: "1994-09-10",
            status: "Released", posterPath: "/d5iIlFn5s0ImszYzBPb8JPIfbXD.jpg",
            backdropPath: "/suaEOtk1N1sgg2MTM7oZd2cfVp3.jpg",
            runtime: 154, genreIds: [53, 80], budget: 8_000_000, revenue: 213_900_000,
            voteAverage: 8.488, voteCount: 28_004, popularity: 68.2, imdbId: "tt0110912",
            localizedTitles: ["ja-JP": "パルプ・フィクション"],
            cast: cast([
                (8891, "Vincent Vega"), (2231, "Jules Winnfield"), (139, "Mia Wallace"), (62, "Butch Coolidge"),
            ]),
            crew: crew([(138, "Directing", "Director"), (138, "Writing", "Writer")]),
            ratings: Ratings(
                imdb: Rating(value: 8.9, votes: 2_201_000), kinopoisk: Rating(value: 8.6, votes: 690_000),
                metacritic: Rating(value: 95, votes: 24), rottenTomatoes: Rating(value: 92, votes: nil),
                tmdb: Rating(value: 8.5, votes: 28_004))),
        CatalogMovie(
            id: 13, title: "Forrest Gump", originalTitle: "Forrest Gump", originalLanguage: "en",
            overview:
                "A man with a low IQ has accomplished great things in his life and been present during significant historic events—in each case, far exceeding what anyone imagined he could do. But despite all he has achieved, his one true love eludes him.",
            tagline: "The world will never be the same once you've seen it through the eyes of Forrest Gump.",
            releaseDate: "1994-06-23", status: "Released", posterPath: "/arw2vcBveWOVZr6pxd9XTd1TdQa.jpg",
            backdropPath: "/qdIMHd4sEfJSckfVJfKQvisL02a.jpg", runtime: 142, genreIds: [35, 18, 10749],
            budget: 55_000_000, revenue: 677_387_716, voteAverage: 8.477, voteCount: 27_250, popularity: 61.9,
            imdbId: "tt0109830", localizedTitles: ["ja-JP": "フォレスト・ガンプ/一期一会"],
            cast: cast([(31, "Forrest Gump"), (32, "Jenny Curran")]),
            crew: crew([(24, "Directing", "Director")]),
            ratings: Ratings(
                imdb: Rating(value: 8.8, votes: 2_300_000), kinopoisk: Rating(value: 8.9, votes: 1_050_000),
                metacritic: Rating(value: 82, votes: 20), rottenTomatoes: Rating(value: 71, votes: nil),
                tmdb: Rating(value: 8.5, votes: 27_250))),
        CatalogMovie(
            id: 155, title: "The Dark Knight", originalTitle: "The Dark Knight", originalLanguage: "en",
            overview:
                "Batman raises the stakes in his war on crime. With the help of Lt. Jim Gordon and District Attorney Harvey Dent, Batman sets out to dismantle the remaining criminal organizations that plague the streets. The partnership proves to be effective, but they soon find themselves prey to a reign of chaos unleashed by a rising criminal mastermind known to the terrified citizens of Gotham as the Joker.",
            tagline: "Welcome to a world without rules.", releaseDate: "2008-07-16", status: "Released",
            posterPath: "/qJ2tW6WMUDux911r6m7haRef0WH.jpg", backdropPath: "/nMKdUUepR0i5zn0y1T4CsSB5chy.jpg",
            runtime: 152, genreIds: [18, 28, 80, 53], budget: 185_000_000, revenue: 1_004_558_444,
            voteAverage: 8.516, voteCount: 33_120, popularity: 95.1, imdbId: "tt0468569",
            localizedTitles: [
                "es-ES": "El caballero oscuro", "fr-FR": "The Dark Knight : Le Chevalier noir", "ja-JP": "ダークナイト",
            ],
            cast: cast([
                (3894, "Bruce Wayne / Batman"), (1810, "Joker"), (6383, "Harvey Dent / Two-Face"),
                (3895, "Alfred Pennyworth"), (64, "James Gordon"), (192, "Lucius Fox"),
            ]),
            crew: crew([
                (525, "Directing", "Director"), (525, "Writing", "Screenplay"), (527, "Writing", "Screenplay"),
                (947, "Sound", "Original Music Composer"), (556, "Production", "Producer"),
            ]),
            ratings: Ratings(
                imdb: Rating(value: 9.0, votes: 2_900_000), kinopoisk: Rating(value: 8.5, votes: 880_000),
                metacritic: Rating(value: 84, votes: 39), rottenTomatoes: Rating(value: 94, votes: nil),
                tmdb: Rating(value: 8.5, votes: 33_120))),
        CatalogMovie(
            id: 27205, title: "Inception", originalTitle: "Inception", originalLanguage: "en",
            overview:
                "Cobb, a skilled thief who commits corporate espionage by infiltrating the subconscious of his targets is offered a chance to regain his old life as payment for a task considered to be impossible: \"inception\", the implantation of another person's idea into a target's subconscious.",
            tagline: "Your mind is the scene of the crime.", releaseDate: "2010-07-15", status: "Released",
            posterPath: "/ljsZTbVsrQSqZgWeep2B1QiDKuh.jpg", backdropPath: "/8ZTVqvKDQ8emSGUEMjsS4yHAwrp.jpg",
            runtime: 148, genreIds: [28, 878, 12], budget: 160_000_000, revenue: 839_030_630,
            voteAverage: 8.369, voteCount: 36_480, popularity: 88.7, imdbId: "tt1375666",
            localizedTitles: ["es-ES": "Origen", "ja-JP": "インセプション"],
            cast: cast([
                (6193, "Dom Cobb"), (24045, "Arthur"), (27578, "Ariadne"), (2524, "Eames"),
                (2037, "Robert Fischer"), (8293, "Mal"), (3895, "Professor Stephen Miles"),
            ]),
            crew: crew([
                (525, "Directing", "Director"), (525, "Writing", "Writer"),
                (947, "Sound", "Original Music Composer"), (556, "Production", "Producer"),
            ]),
            ratings: Ratings(
                imdb: Rating(value: 8.8, votes: 2_600_000), kinopoisk: Rating(value: 8.7, votes: 1_100_000),
                metacritic: Rating(value: 74, votes: 42), rottenTomatoes: Rating(value: 87, votes: nil),
                tmdb: Rating(value: 8.4, votes: 36_480))),
        CatalogMovie(
            id: 238, title: "The Godfather", originalTitle: "The Godfather", originalLanguage: "en",
            overview:
                "Spanning the years 1945 to 1955, a chronicle of the fictional Italian-American Corleone crime family. When organized crime family patriarch, Vito Corleone barely survives an attempt on his life, his youngest son, Michael steps in to take care of the would-be killers, launching a campaign of bloody revenge.",
            tagline: "An offer you can't refuse.", releaseDate: "1972-03-14", status: "Released",
            posterPath: "/3bhkrj58Vtu7enYsRolD1fZdja1.jpg", backdropPath: "/tmU7GeKVybMWFButWEGl2M4GeiP.jpg",
            runtime: 175, genreIds: [18, 80], budget: 6_000_000, revenue: 245_066_411,
            voteAverage: 8.7, voteCount: 20_512, popularity: 59.4, imdbId: "tt0068646",
            localizedTitles: [
                "de-DE": "Der Pate", "fr-FR": "Le Parrain", "es-ES": "El padrino", "it-IT": "Il padrino",
                "pt-BR": "O Poderoso Chefão", "ja-JP": "ゴッドファーザー",
            ],
            cast: cast([(3084, "Don Vito Corleone"), (1158, "Michael Corleone")]),
            crew: crew([(1776, "Directing", "Director"), (1776, "Writing", "Screenplay")]),
            ratings: Ratings(
                imdb: Rating(value: 9.2, votes: 2_000_000), kinopoisk: Rating(value: 8.7, votes: 600_000),
                metacritic: Rating(value: 100, votes: 16), rottenTomatoes: Rating(value: 97, votes: nil),
                tmdb: Rating(value: 8.7, votes: 20_512))),
        CatalogMovie(
            id: 278, title: "The Shawshank Redemption", originalTitle: "The Shawshank Redemption",
            originalLanguage: "en",
            overview:
                "Imprisoned in the 1940s for the double murder of his wife and her lover, upstanding banker Andy Dufresne begins a new life at the Shawshank prison, where he puts his accounting skills to work for an amoral warden. During his long stretch in prison, Dufresne comes to be admired by the other inmates for his integrity and unquenchable sense of hope.",
            tagline: "Fear can hold you prisoner. Hope can set you free.", releaseDate: "1994-09-23",
            status: "Released",
            posterPath: "/9cqNxx0GxF0bflZmeSMuL5tnGzr.jpg", backdropPath: "/zfbjgQE1uSd9wiPTX4VzsLi0rGG.jpg",
            runtime: 142, genreIds: [18, 80], budget: 25_000_000, revenue: 28_341_469,
            voteAverage: 8.707, voteCount: 26_900, popularity: 64.0, imdbId: "tt0111161",
            localizedTitles: [
                "de-DE": "Die Verurteilten", "fr-FR": "Les Évadés", "es-ES": "Cadena perpetua",
                "ja-JP": "ショーシャンクの空に",
            ],
            cast: cast([(504, "Andy Dufresne"), (192, "Ellis Boyd 'Red' Redding")]),
            crew: crew([(4027, "Directing", "Director"), (4027, "Writing", "Screenplay")]),
            ratings: Ratings(
                imdb: Rating(value: 9.3, votes: 2_900_000), kinopoisk: Rating(value: 9.1, votes: 1_200_000),
                metacritic: Rating(value: 82, votes: 21), rottenTomatoes: Rating(value: 89, votes: nil),
                tmdb: Rating(value: 8.7, votes: 26_900))),
        CatalogMovie(
            id: 603, title: "The Matrix", originalTitle: "The Matrix", originalLanguage: "en",
            overview:
                "Set in the 22nd century, The Matrix tells the story of a computer hacker who joins a group of underground insurgents fighting the vast and powerful computers who now rule the earth.",
            tagline: "Welcome to the Real World.", releaseDate: "1999-03-31", status: "Released",
            posterPath: "/f89U3ADr1oiB1s9GkdPOEpXUk5H.jpg", backdropPath: "/ncEsesgOJDNrTUED89hYbA117wo.jpg",
            runtime: 136, genreIds: [28, 878], budget: 63_000_000, revenue: 463_517_383,
            voteAverage: 8.2, voteCount: 25_600, popularity: 70.3, imdbId: "tt0133093",
            localizedTitles: ["de-DE": "Matrix", "fr-FR": "Matrix", "es-ES": "Matrix", "ja-JP": "マトリックス"],
            cast: cast([(6384, "Thomas A. Anderson / Neo"), (2975, "Morpheus"), (530, "Trinity")]),
            crew: crew([(9340, "Directing", "Director"), (9340, "Writing", "Writer")]),
            ratings: Ratings(
                imdb: Rating(value: 8.7, votes: 2_100_000), kinopoisk: Rating(value: 8.5, votes: 700_000),
                metacritic: Rating(value: 73, votes: 36), rottenTomatoes: Rating(value: 83, votes: nil),
                tmdb: Rating(value: 8.2, votes: 25_600))),
        CatalogMovie(
            id: 157336, title: "Interstellar", originalTitle: "Interstellar", originalLanguage: "en",
            overview:
                "The adventures of a group of explorers who make use of a newly discovered wormhole to surpass the limitations on human space travel and conquer the vast distances involved in an interstellar voyage.",
            tagline: "Mankind was born on Earth. It was never meant to die here.", releaseDate: "2014-11-05",
            status: "Released", posterPath: "/gEU2QniE6E77NI6lCU6MxlNBvIx.jpg",
            backdropPath: "/xJHokMbljvjADYdit5fK5VQsXEG.jpg",
            runtime: 169, genreIds: [12, 18, 878], budget: 165_000_000, revenue: 701_729_206,
            voteAverage: 8.441, voteCount: 35_700, popularity: 121.5, imdbId: "tt0816692",
            localizedTitles: ["ja-JP": "インターステラー"],
            cast: cast([
                (10297, "Cooper"), (1813, "Brand"), (83002, "Murph"), (3895, "Professor Brand"), (1892, "Mann"),
            ]),
            crew: crew([
                (525, "Directing", "Director"), (525, "Writing", "Writer"), (527, "Writing", "Writer"),
                (947, "Sound", "Original Music Composer"), (556, "Production", "Producer"),
            ]),
            ratings: Ratings(
                imdb: Rating(value: 8.7, votes: 2_200_000), kinopoisk: Rating(value: 8.6, votes: 1_000_000),
                metacritic: Rating(value: 74, votes: 46), rottenTomatoes: Rating(value: 73, votes: nil),
                tmdb: Rating(value: 8.4, votes: 35_700))),
        CatalogMovie(
            id: 129, title: "Spirited Away", originalTitle: "千と千尋の神隠し", originalLanguage: "ja",
            overview:
                "A young girl, Chihiro, becomes trapped in a strange new world of spirits. When her parents undergo a mysterious transformation, she must call upon the courage she never knew she had to free her family.",
            tagline: "", releaseDate: "2001-07-20", status: "Released",
            posterPath: "/39wmItIWsg5sZMyRUHLkWBcuVCM.jpg", backdropPath: "/bSXfU4dwZyBA1vMmXvejdRXBvuF.jpg",
            runtime: 125, genreIds: [16, 10751, 14], budget: 19_000_000, revenue: 274_925_095,
            voteAverage: 8.537, voteCount: 16_900, popularity: 54.2, imdbId: "tt0245429",
            localizedTitles: [
                "de-DE": "Chihiros Reise ins Zauberland", "fr-FR": "Le Voyage de Chihiro",
                "es-ES": "El viaje de Chihiro",
                "ja-JP": "千と千尋の神隠し", "ko-KR": "센과 치히로의 행방불명",
            ],
            cast: cast([(19587, "Chihiro Ogino (voice)")]),
            crew: crew([(608, "Directing", "Director"), (608, "Writing", "Screenplay")]),
            ratings: Ratings(
                imdb: Rating(value: 8.6, votes: 880_000), kinopoisk: Rating(value: 8.5, votes: 560_000),
                metacritic: Rating(value: 96, votes: 41), rottenTomatoes: Rating(value: 96, votes: nil),
                tmdb: Rating(value: 8.5, votes: 16_900))),
        CatalogMovie(
            id: 496243, title: "Parasite", originalTitle: "기생충", originalLanguage: "ko",
            overview:
                "All unemployed, Ki-taek's family takes peculiar interest in the wealthy and glamorous Parks for their livelihood until they get entangled in an unexpected incident.",
            tagline: "Act like you own the place.", releaseDate: "2019-05-30", status: "Released",
            posterPath: "/7IiTTgloJzvGI1TAYymCfbfl3vT.jpg", backdropPath: "/hiKmpZMGZsrkA3cdce8a7Dpos1j.jpg",
            runtime: 133, genreIds: [35, 53, 18], budget: 11_363_000, revenue: 257_591_776,
            voteAverage: 8.5, voteCount: 18_300, popularity: 48.6, imdbId: "tt6751668",
            localizedTitles: ["es-ES": "Parásitos", "ja-JP": "パラサイト 半地下の家族", "ko-KR": "기생충"],
            cast: cast([(20738, "Kim Ki-taek")]),
            crew: crew([(21684, "Directing", "Director"), (21684, "Writing", "Screenplay")]),
            ratings: Ratings(
                imdb: Rating(value: 8.5, votes: 950_000), kinopoisk: nil,
                metacritic: Rating(value: 96, votes: 53), rottenTomatoes: Rating(value: 99, votes: nil),
                tmdb: Rating(value: 8.5, votes: 18_300))),
        CatalogMovie(
            id: 872585, title: "Oppenheimer", originalTitle: "Oppenheimer", originalLanguage: "en",
            overview:
                "The story of J. Robert Oppenheimer's role in the development of the atomic bomb during World War II.",
            tagline: "The world forever changes.", releaseDate: "2023-07-19", status: "Released",
            posterPath: "/8Gxv8gSFCU0XGDykEGv7zR1n2ua.jpg", backdropPath: "/nb3xI8XI3w4pMVZ38VijbsyBqP4.jpg",
            runtime: 181, genreIds: [18, 36], budget: 100_000_000, revenue: 952_000_000,
            voteAverage: 8.066, voteCount: 9_800, popularity: 140.3, imdbId: "tt15398776",
            localizedTitles: ["ja-JP": "オッペンハイマー"],
            cast: cast([
                (2037, "J. Robert Oppenheimer"), (5081, "Kitty Oppenheimer"), (1892, "Leslie Groves"),
                (3223, "Lewis Strauss"),
            ]),
            crew: crew([
                (525, "Directing", "Director"), (525, "Writing", "Screenplay"), (556, "Production", "Producer"),
            ]),
            ratings: Ratings(
                imdb: Rating(value: 8.3, votes: 820_000), kinopoisk: Rating(value: 8.0, votes: 310_000),
                metacritic: Rating(value: 90, votes: nil), rottenTomatoes: Rating(value: 93, votes: nil),
                tmdb: Rating(value: 8.1, votes: 9_800))),
    ]

    /// Famous shows, with the people who list them in `known_for`.
    static let shows: [CatalogShow] = [
        CatalogShow(
            id: 1396, name: "Breaking Bad", originalName: "Breaking Bad", originalLanguage: "en",
            overview:
                "Walter White, a New Mexico chemistry teacher, is diagnosed with Stage III cancer and given a prognosis of only two years left to live. He becomes filled with a sense of fearlessness and an unrelenting desire to secure his family's financial future at any cost as he enters the dangerous world of drugs and crime.",
            firstAirDate: "2008-01-20", posterPath: "/ztkUQFLlC19CCMYHW9o1zWhJRNq.jpg",
            backdropPath: "/9faGSFi5jam6pDWGNd0p8JcJgXQ.jpg", voteAverage: 8.9, voteCount: 14_500, popularity: 301.2,
            genreIds: [18, 80], originCountry: ["US"], localizedNames: ["ja-JP": "ブレイキング・バッド"],
            starring: [17419, 84497]),
        CatalogShow(
            id: 1399, name: "Game of Thrones", originalName: "Game of Thrones", originalLanguage: "en",
            overview:
                "Seven noble families fight for control of the mythical land of Westeros. Friction between the houses leads to full-scale war. All while a very ancient evil awakens in the farthest north.",
            firstAirDate: "2011-04-17", posterPath: "/1XS1oqL89opfnbLl8WnZY1O1uJx.jpg",
            backdropPath: "/2OMB0ynKlyIenMJWI2Dy9IWT4c.jpg", voteAverage: 8.4, voteCount: 24_100, popularity: 280.6,
            genreIds: [10765, 18, 10759], originCountry: ["US"],
            localizedNames: ["es-ES": "Juego de tronos", "ja-JP": "ゲーム・オブ・スローンズ"],
            starring: [1223786, 22970]),
        CatalogShow(
            id: 66732, name: "Stranger Things", originalName: "Stranger Things", originalLanguage: "en",
            overview:
                "When a young boy vanishes, a small town uncovers a mystery involving secret experiments, terrifying supernatural forces, and one strange little girl.",
            firstAirDate: "2016-07-15", posterPath: "/uOOtwVbSr4QDjAGIifLDwpb2Pdl.jpg",
            backdropPath: "/56v2KjBlU4XaOv9rVYEQypROD7P.jpg", voteAverage: 8.6, voteCount: 18_200, popularity: 190.4,
            genreIds: [18, 10765, 9648], originCountry: ["US"],
            localizedNames: ["ja-JP": "ストレンジャー・シングス 未知の世界"], starring: [1356210, 35029]),
        CatalogShow(
            id: 94605, name: "Arcane", originalName: "Arcane", originalLanguage: "en",
            overview:
                "Amid the stark discord of twin cities Piltover and Zaun, two sisters fight on rival sides of a war between magic technologies and clashing convictions.",
            firstAirDate: "2021-11-06", posterPath: "/abf8tHznhSvl9BAElD2cQeRr7do.jpg",
            backdropPath: "/q8eejQcg1bAqImEV8jh8RtBD4uH.jpg", voteAverage: 8.7, voteCount: 4_900, popularity: 120.8,
            genreIds: [16, 10765, 10759], originCountry: ["US"], starring: [130640]),
        CatalogShow(
            id: 100088, name: "The Last of Us", originalName: "The Last of Us", originalLanguage: "en",
            overview:
                "Twenty years after modern civilization has been destroyed, Joel, a hardened survivor, is hired to smuggle Ellie, a 14-year-old girl, out of an oppressive quarantine zone.",
            firstAirDate: "2023-01-15", posterPath: "/dmo6TYuuJgaYinXBPjrgG9mB5od.jpg",
            backdropPath: "/lY2DhbA7Hy44fAKddr06UrXWWaQ.jpg", voteAverage: 8.6, voteCount: 5_600, popularity: 210.9,
            genreIds: [18], originCountry: ["US"], starring: [1253360, 2224828]),
        CatalogShow(
            id: 119051, name: "Wednesday", originalName: "Wednesday", originalLanguage: "en",
            overview:
                "Wednesday Addams is sent to Nevermore Academy, a bizarre boarding school where she attempts to master her psychic powers, stop a monstrous killing spree of the town citizens, and solve the supernatural mystery that affected her family 25 years ago.",
            firstAirDate: "2022-11-23", posterPath: "/9PFonBhy4cQy7Jz20NpMygczOkv.jpg",
            backdropPath: "/iHSwvRVsRyxpX7FE7GbviaDvgGZ.jpg", voteAverage: 8.5, voteCount: 8_900, popularity: 175.3,
            genreIds: [10765, 9648, 35], originCountry: ["US"],
            localizedNames: ["es-ES": "Miércoles", "fr-FR": "Mercredi"], starring: [974169]),
        CatalogShow(
            id: 85937, name: "Demon Slayer: Kimetsu no Yaiba", originalName: "鬼滅の刃", originalLanguage: "ja",
            overview:
                "It is the Taisho Period in Japan. Tanjiro, a kindhearted boy who sells charcoal for a living, finds his family slaughtered by a demon. To make matters worse, his younger sister Nezuko, the sole survivor, has been transformed into a demon herself.",
            firstAirDate: "2019-04-06", posterPath: "/xUfRZu2mi8jH6SzQEJGP6tjBuYj.jpg",
            backdropPath: "/3GQKYh6Trm8pxd2AypovoYQf4Ay.jpg", voteAverage: 8.7, voteCount: 6_300, popularity: 160.1,
            genreIds: [16, 10759, 10765], originCountry: ["JP"],
            localizedNames: ["ja-JP": "鬼滅の刃"], starring: [1256603]),
    ]

    /// How far each famous show has run, as amodb lists it.
    static let showRuns: [Int: ShowRun] = [
        1396: ShowRun(seasons: 5, episodes: 62, lastAirDate: "2013-09-29", status: "Ended"),
        1399: ShowRun(seasons: 8, episodes: 73, lastAirDate: "2019-05-19", status: "Ended"),
        66732: ShowRun(seasons: 5, episodes: 42, lastAirDate: "2025-12-31", status: "Ended"),
        94605: ShowRun(seasons: 2, episodes: 18, lastAirDate: "2024-11-23", status: "Ended"),
        100088: ShowRun(seasons: 2, episodes: 16, lastAirDate: "2025-05-25", status: "Returning Series"),
        119051: ShowRun(seasons: 2, episodes: 16, lastAirDate: "2025-09-03", status: "Returning Series"),
        85937: ShowRun(seasons: 5, episodes: 63, lastAirDate: "2024-06-30", status: "Returning Series"),
    ]

    /// What `/person/{id}` says of a life beyond a list item.
    typealias Life = (birthday: String, deathday: String?, placeOfBirth: String, imdbId: String?)

    /// Real facts about some famous people. The others' are `null`, as amodb sends what it
    /// does not know: nothing is made up about a real person.
    static let lives: [Int: Life] = [
        287: ("1963-12-18", nil, "Shawnee, Oklahoma, USA", "nm0000093"),
        819: ("1969-08-18", nil, "Boston, Massachusetts, USA", "nm0001570"),
        31: ("1956-07-09", nil, "Concord, California, USA", "nm0000158"),
        192: ("1937-06-01", nil, "Memphis, Tennessee, USA", "nm0000151"),
        6193: ("1974-11-11", nil, "Los Angeles, California, USA", "nm0000138"),
        6384: ("1964-09-02", nil, "Beirut, Lebanon", "nm0000206"),
        525: ("1970-07-30", nil, "Westminster, London, England, UK", "nm0634240"),
        1158: ("1940-04-25", nil, "New York City, New York, USA", "nm0000199"),
        3084: ("1924-04-03", "2004-07-01", "Omaha, Nebraska, USA", "nm0000008"),
        1810: ("1979-04-04", "2008-01-22", "Perth, Western Australia, Australia", "nm0005132"),
        7470: ("1947-09-27", "2022-01-20", "Dallas, Texas, USA", nil),
    ]

    /// The famous people amodb lists as female (gender 1); the others not in `nonBinary` are
    /// male (2).
    static let female: Set<Int> = [
        1283, 556, 8293, 139, 32, 530, 9340, 1813, 83002, 19587, 5081, 1223786, 1356210, 130640, 974169,
    ]
    /// The famous people amodb lists as non-binary (gender 3).
    static let nonBinary: Set<Int> = [2224828]

    /// Names in other scripts that amodb lists under `also_known_as`.
    static let alsoKnownAs: [Int: [String]] = [
        608: ["宮崎駿", "Miyazaki Hayao"], 21684: ["봉준호", "Bong Joon Ho"], 20738: ["송강호"],
        19587: ["柊瑠美"], 1256603: ["花江夏樹"],
    ]

    /// Billed cast from (person id, character) pairs, in billing order.
    private static func cast(_ entries: [(Int, String)]) -> [CastMember] {
        entries.enumerated().map { order, entry in
            CastMember(
                id: entry.0, name: name(of: entry.0), character: entry.1,
                profilePath: profilePath(of: entry.0), order: order)
        }
    }

    /// Crew from (person id, department, job) triples.
    private static func crew(_ entries: [(Int, String, String)]) -> [CrewMember] {
        entries.map {
            CrewMember(id: $0.0, name: name(of: $0.0), department: $0.1, job: $0.2, profilePath: profilePath(of: $0.0))
        }
    }

    private static func name(of id: Int) -> String {
        people.first { $0.id == id }?.name ?? "Unknown"
    }

    /// A stable profile image path per person (every eleventh has none, as on amodb).
    static func profilePath(of id: Int) -> String? {
        guard id % 11 != 0 else { return nil }
        var generator = SeededGenerator(seed: UInt64(id) &* 0x5851_F42D_4C95_7F2D)
        return generator.imagePath()
    }
}

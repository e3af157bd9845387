from harvester.cli import main

raise SystemExit(main())

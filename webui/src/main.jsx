import { render } from 'preact';
import { App } from './components/App.jsx';
import './styles.css';

render(<App />, document.getElementById('app'));
